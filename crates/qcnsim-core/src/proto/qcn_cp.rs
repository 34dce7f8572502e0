//! IEEE 802.1Qau congestion point (CP). See docs/models/qcn.md.

use crate::engine::Rng;

/// CP parameters. Queue quantities are bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct CpParams {
    /// Qeq, the equilibrium queue (set point), bytes. MIB cpQSp default 26000.
    pub q_eq_bytes: u64,
    /// w, the weight of the queue derivative. Pseudo code and MIB (2^1): 2.
    pub w: f64,
    /// Width of the quantised feedback in bits (6 in the standard: 0..63).
    pub fb_bits: u32,
    /// Base sampling interval, bytes. MIB cpMinSampleBase default 150000.
    pub sample_base_bytes: u64,
    /// Sampling table: interval for `qntz_fb >> (fb_bits-3)` as a multiple of the base
    /// (150, 75, 50, 37.5, 30, 25, 21.5, 18.5 KB at base 150 KB).
    pub sample_table: [f64; 8],
    /// Jitter of each new sampling interval: uniform in [1 - jitter, 1 + jitter]. 0.15.
    pub jitter: f64,
}

/// What the CP saw at a sample instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpSample {
    /// Fb = -(Qoff + w*Qdelta), bytes, before clamping (may be positive).
    pub fb_raw: f64,
    /// Quantised |Fb| of the clamped negative feedback, 0..=2^fb_bits - 1.
    pub qntz_fb: u8,
    /// Qoff = Q - Qeq, bytes.
    pub q_off: i64,
    /// Qdelta = Q - Qold, bytes.
    pub q_delta: i64,
}

impl CpSample {
    /// The standard sends a CNM at a sample instant only when the quantised feedback is > 0.
    pub fn sends_cnm(&self) -> bool {
        self.qntz_fb > 0
    }
}

pub struct Cp {
    // filled in by the implementation
    _rng: Rng,
}
