//! A fast hasher for the maps that loading a large network fills (node names, link pairs,
//! hosts by switch): a word-at-a-time multiply-rotate hash in the manner of FxHash (rustc,
//! Firefox). The standard
//! SipHash resists crafted keys, which scenario files do not need, at several times the cost
//! on short names (a k = 64 fat-tree's loading looks up about two million names).

use std::hash::{BuildHasherDefault, Hasher};

/// The hash state.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.hash = (self.hash.rotate_left(26) ^ w).wrapping_mul(K);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut c = bytes.chunks_exact(8);
        for w in &mut c {
            self.add(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let rest = c.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // spread the high bits down (the table picks buckets by low bits, groups by high ones)
        let h = self.hash;
        h ^ (h >> 29)
    }
}

pub type FastHash = BuildHasherDefault<FxHasher>;
pub type FastMap<K, V> = std::collections::HashMap<K, V, FastHash>;
/// Node name -> index.
pub type NameIndex = FastMap<String, usize>;
