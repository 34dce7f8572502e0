//! Units: simulated time (integer picoseconds), byte counts and bit rates, and the parsing of
//! unit strings such as `"10Gbps"`, `"0.5us"`, `"150KB"`.
//!
//! Decimal prefixes are SI (`KB` = 1000 bytes, `Gbps` = 10^9 bit/s), as the 802.1Q MIB and the
//! QCN literature use them; binary prefixes are spelled `KiB`, `MiB`, `GiB`. Time strings are
//! converted exactly: a value that is not a whole number of picoseconds is rejected rather than
//! rounded, so a scenario means exactly what it says.

use std::fmt;

/// Simulated time in picoseconds. Never accumulate floating-point time: every instant in a run
/// is an integer number of picoseconds since t = 0.
pub type SimTime = u64;

pub const PS: SimTime = 1;
pub const NS: SimTime = 1_000;
pub const US: SimTime = 1_000_000;
pub const MS: SimTime = 1_000_000_000;
pub const SEC: SimTime = 1_000_000_000_000;

/// Time to serialise `bytes` at `rate_bps`, in picoseconds, rounded up (a frame is never
/// considered sent before its last bit is).
#[inline]
pub fn tx_time(bytes: u64, rate_bps: u64) -> SimTime {
    debug_assert!(rate_bps > 0);
    let bits = bytes as u128 * 8 * SEC as u128;
    bits.div_ceil(rate_bps as u128) as SimTime
}

/// Same as [`tx_time`] for a fractional rate (rate limiters run at real-valued rates).
#[inline]
pub fn tx_time_f(bytes: u64, rate_bps: f64) -> SimTime {
    debug_assert!(rate_bps > 0.0);
    ((bytes as f64 * 8.0 * SEC as f64) / rate_bps).ceil() as SimTime
}

/// Seconds as a float, for reports only.
#[inline]
pub fn secs(t: SimTime) -> f64 {
    t as f64 / SEC as f64
}

/// 2^52: from here on every f64 is an integer.
pub const F64_INT: f64 = 4_503_599_627_370_496.0;

/// `x as f64` (the same value) through the signed conversion, one instruction on x86-64 where
/// the unsigned one takes several. From 2^63 on, `x` is halved keeping its lowest bit as a
/// sticky bit (round to odd), which converts with the same rounding, and doubled back. (Written
/// as `x as f64` in that branch, the compiler merges both branches into the slow conversion.)
#[inline(always)]
pub fn u64_f64(x: u64) -> f64 {
    if x <= i64::MAX as u64 {
        x as i64 as f64
    } else {
        ((x >> 1 | x & 1) as i64 as f64) * 2.0
    }
}

/// For 0 <= x < 2^52: `x` rounded to the nearest integer (ties to even), as an integer and as a
/// float. Adding 2^52 rounds the fraction away (floats there are one apart), and the integer is
/// then the low bits of the sum's representation: no float-to-integer conversion, whose
/// saturating semantics cost several instructions.
#[inline(always)]
fn round_even_small(x: f64) -> (SimTime, f64) {
    let y = x + F64_INT;
    (y.to_bits() - F64_INT.to_bits(), y - F64_INT)
}

/// `x.round() as SimTime`, without the libm call (x86-64 baseline has no `roundsd`). Exact: for
/// 0 <= x < 2^52, `x - r` (r the nearest integer) is computed without rounding error, and is
/// exactly 0.5 only at a tie that went down to even, which rounds up instead (half away from
/// zero).
#[inline]
pub fn round_ps(x: f64) -> SimTime {
    if (0.0..F64_INT).contains(&x) {
        let (r, rf) = round_even_small(x);
        r + (x - rf == 0.5) as SimTime
    } else {
        x.round() as SimTime
    }
}

/// `x.ceil() as SimTime`, without the libm call; exact like [`round_ps`] (the nearest integer
/// is the ceiling unless it is below `x`).
#[inline]
pub fn ceil_ps(x: f64) -> SimTime {
    if (0.0..F64_INT).contains(&x) {
        let (r, rf) = round_even_small(x);
        r + (rf < x) as SimTime
    } else {
        x.ceil() as SimTime
    }
}

/// A parsed decimal number: `mantissa * 10^-frac_digits`, kept exact.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Decimal {
    mantissa: u128,
    frac_digits: u32,
}

fn split_number(s: &str) -> Option<(&str, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    Some((&s[..end], s[end..].trim()))
}

fn parse_decimal(num: &str) -> Option<Decimal> {
    let num: String = num.chars().filter(|c| *c != '_').collect();
    let mut parts = num.split('.');
    let int = parts.next()?;
    let frac = parts.next().unwrap_or("");
    if parts.next().is_some() || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let digits = format!("{int}{frac}");
    if digits.len() > 30 {
        return None;
    }
    let mantissa: u128 = digits.parse().ok()?;
    Some(Decimal {
        mantissa,
        frac_digits: frac.len() as u32,
    })
}

/// Multiply a decimal by an integer unit factor; `None` if the result is not an integer or
/// overflows u64.
fn scale_exact(d: Decimal, factor: u128) -> Option<u64> {
    let num = d.mantissa.checked_mul(factor)?;
    let den = 10u128.checked_pow(d.frac_digits)?;
    if num % den != 0 {
        return None;
    }
    u64::try_from(num / den).ok()
}

/// Why a unit string was rejected; the caller adds the field path.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitError(pub String);

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub const TIME_HELP: &str = "a time with a unit: ps, ns, us, ms or s (e.g. \"0.5us\", \"10ms\")";
pub const RATE_HELP: &str =
    "a bit rate with a unit: bps, Kbps, Mbps, Gbps or Tbps (e.g. \"10Gbps\", \"0.5Gbps\")";
pub const BYTES_HELP: &str =
    "a size with a unit: B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (e.g. \"150KB\", \"1500B\")";

/// The largest time a scenario may give (any duration, delay, interval or instant): 10^6 s,
/// about 11.6 days. The engine adds a few such times together (an instant plus a delay plus a
/// serialisation time), so with every term at most this large no sum can wrap around u64
/// picoseconds (about 213 days).
pub const MAX_TIME: SimTime = 1_000_000 * SEC;
/// The slowest rate a scenario may give: 1 bit/s. The longest frame (9216 B plus 1000 B of
/// preamble and 1000 B of gap) then serialises in about 9e16 ps, far below [`MAX_TIME`].
pub const MIN_RATE: f64 = 1.0;
/// The fastest rate a scenario may give: 1000 Tbit/s (a 64-byte frame in about half a
/// picosecond, the resolution of simulated time).
pub const MAX_RATE: f64 = 1e15;

const NEGATIVE: &str = "must not be negative";

fn negative(s: &str) -> bool {
    s.trim_start().starts_with('-')
}

/// Parse a time such as `"0.5us"` into picoseconds, exactly; at most [`MAX_TIME`].
pub fn parse_time(s: &str) -> Result<SimTime, UnitError> {
    if negative(s) {
        return Err(UnitError(format!("a time of 0 or more ({NEGATIVE})")));
    }
    let (num, unit) = split_number(s).ok_or_else(|| UnitError(TIME_HELP.into()))?;
    let factor: u128 = match unit {
        "ps" => 1,
        "ns" => NS as u128,
        "us" | "µs" => US as u128,
        "ms" => MS as u128,
        "s" => SEC as u128,
        _ => return Err(UnitError(TIME_HELP.into())),
    };
    let d = parse_decimal(num).ok_or_else(|| UnitError(TIME_HELP.into()))?;
    let bound = || {
        UnitError(
            "a time that is a whole number of picoseconds and at most 1000000s (about 11.6 days)"
                .into(),
        )
    };
    match scale_exact(d, factor) {
        Some(t) if t <= MAX_TIME => Ok(t),
        _ => Err(bound()),
    }
}

/// Parse a bit rate such as `"10Gbps"` into bit/s (a float: rates of rate limiters are real).
/// Zero is returned as it is (callers that need a rate above zero say so); any other rate must
/// lie in [`MIN_RATE`, `MAX_RATE`].
pub fn parse_rate(s: &str) -> Result<f64, UnitError> {
    if negative(s) {
        return Err(UnitError(format!("a rate above zero ({NEGATIVE})")));
    }
    let (num, unit) = split_number(s).ok_or_else(|| UnitError(RATE_HELP.into()))?;
    let factor: f64 = match unit {
        "bps" | "b/s" => 1.0,
        "Kbps" | "kbps" | "Kb/s" | "kb/s" => 1e3,
        "Mbps" | "Mb/s" => 1e6,
        "Gbps" | "Gb/s" => 1e9,
        "Tbps" | "Tb/s" => 1e12,
        _ => return Err(UnitError(RATE_HELP.into())),
    };
    let d = parse_decimal(num).ok_or_else(|| UnitError(RATE_HELP.into()))?;
    let r = d.mantissa as f64 / 10f64.powi(d.frac_digits as i32) * factor;
    if r != 0.0 && !(MIN_RATE..=MAX_RATE).contains(&r) {
        return Err(UnitError(
            "a rate from 1bps to 1000Tbps (the range simulated time can represent)".into(),
        ));
    }
    Ok(r)
}

/// Parse a size such as `"150KB"` into bytes; the result must be a whole number of bytes.
pub fn parse_bytes(s: &str) -> Result<u64, UnitError> {
    if negative(s) {
        return Err(UnitError(format!("a size of 0 or more ({NEGATIVE})")));
    }
    let (num, unit) = split_number(s).ok_or_else(|| UnitError(BYTES_HELP.into()))?;
    let factor: u128 = match unit {
        "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return Err(UnitError(BYTES_HELP.into())),
    };
    let d = parse_decimal(num).ok_or_else(|| UnitError(BYTES_HELP.into()))?;
    scale_exact(d, factor).ok_or_else(|| UnitError("a whole number of bytes".into()))
}

/// Format picoseconds with the largest unit that keeps the value exact.
pub fn fmt_time(t: SimTime) -> String {
    for (unit, f) in [("s", SEC), ("ms", MS), ("us", US), ("ns", NS)] {
        if t % f == 0 && t > 0 {
            return format!("{}{unit}", t / f);
        }
    }
    format!("{t}ps")
}

/// Format a rate compactly ("10Gbps", "0.5Gbps", "5Mbps").
pub fn fmt_rate(r: f64) -> String {
    for (unit, f) in [("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3)] {
        if r >= f {
            return format!("{}{unit}", r / f);
        }
    }
    format!("{r}bps")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_and_ceil_match_std_at_edges() {
        let xs = [
            0.0,
            0.5,
            0.49999999999999994,
            1.5,
            2.5,
            1.0 - f64::EPSILON / 2.0,
            1e15 + 0.5,
            3.5,
            2.4999999999999996,
            1234567.5000000002,
            F64_INT - 1.5,
            F64_INT - 1.0,
            F64_INT - 0.5,
            F64_INT,
            F64_INT * 2.0 + 2.0,
            1e30,
            -0.0,
            -0.4,
            -1.5,
            f64::NAN,
            f64::INFINITY,
        ];
        for x in xs {
            assert_eq!(round_ps(x), x.round() as SimTime, "round {x}");
            assert_eq!(ceil_ps(x), x.ceil() as SimTime, "ceil {x}");
        }
    }

    proptest! {
        #[test]
        fn round_and_ceil_match_std(m in 0u64..(1 << 53), e in -60i32..60) {
            let x = m as f64 * 2f64.powi(e);
            prop_assert_eq!(round_ps(x), x.round() as SimTime);
            prop_assert_eq!(ceil_ps(x), x.ceil() as SimTime);
        }

        #[test]
        fn round_and_ceil_match_std_near_halves(k in 0u64..(1 << 51), q in 0u32..4, nudge in -1i32..2) {
            // k + q/4, moved by one float step either way (ties and their neighbours)
            let x = k as f64 + q as f64 / 4.0;
            let x = match nudge {
                -1 if x > 0.0 => f64::from_bits(x.to_bits() - 1),
                1 => f64::from_bits(x.to_bits() + 1),
                _ => x,
            };
            prop_assert_eq!(round_ps(x), x.round() as SimTime);
            prop_assert_eq!(ceil_ps(x), x.ceil() as SimTime);
        }

        #[test]
        fn u64_to_f64_matches_the_unsigned_conversion(x in any::<u64>(), shift in 0u32..64) {
            let x = x >> shift;
            prop_assert_eq!(u64_f64(x).to_bits(), (x as f64).to_bits());
        }
    }

    #[test]
    fn u64_to_f64_at_edges() {
        let xs = [
            0,
            1,
            (1 << 53) - 1,
            1 << 53,
            (1 << 53) + 1,
            i64::MAX as u64 - 1,
            i64::MAX as u64,
            i64::MAX as u64 + 1,
            u64::MAX - 1,
            u64::MAX,
        ];
        for x in xs {
            assert_eq!(u64_f64(x).to_bits(), (x as f64).to_bits(), "{x}");
        }
    }

    #[test]
    fn time_strings_convert_exactly() {
        let cases: &[(&str, SimTime)] = &[
            ("0.5us", 500_000),
            ("300ns", 300_000),
            ("10ms", 10 * MS),
            ("4s", 4 * SEC),
            ("1.5s", 1_500 * MS),
            ("7ps", 7),
            ("0s", 0),
            ("1_000ns", US),
        ];
        for (s, want) in cases {
            assert_eq!(parse_time(s).unwrap(), *want, "{s}");
        }
    }

    #[test]
    fn time_strings_rejected() {
        for s in ["", "10", "5 hours", "0.1ps", "1e3s", "-1s", "1.2.3s", "us"] {
            assert!(parse_time(s).is_err(), "{s} should be rejected");
        }
    }

    #[test]
    fn negative_values_say_so() {
        for e in [
            parse_time("-5s").unwrap_err(),
            parse_time(" -0.5us").unwrap_err(),
            parse_rate("-1Gbps").unwrap_err(),
            parse_bytes("-1500B").unwrap_err(),
        ] {
            assert!(e.0.contains("must not be negative"), "{e}");
        }
    }

    #[test]
    fn times_and_rates_are_bounded() {
        assert_eq!(parse_time("1000000s").unwrap(), MAX_TIME);
        assert_eq!(parse_time("1000000000000000000ps").unwrap(), MAX_TIME);
        for s in [
            "1000000.000000000001s",
            "1000001s",
            "18446744073709551615ps",
            "18446744073709000000ps",
        ] {
            assert!(
                parse_time(s).unwrap_err().0.contains("at most 1000000s"),
                "{s}"
            );
        }
        assert_eq!(parse_rate("1bps").unwrap(), 1.0);
        assert_eq!(parse_rate("1000Tbps").unwrap(), 1e15);
        assert_eq!(parse_rate("0bps").unwrap(), 0.0);
        for s in ["0.0001bps", "0.5bps", "1001Tbps", "99999999Tbps"] {
            assert!(
                parse_rate(s)
                    .unwrap_err()
                    .0
                    .contains("from 1bps to 1000Tbps"),
                "{s}"
            );
        }
        // the slowest rate and the largest frame stay far from the time bound
        assert!(tx_time_f(9216 + 2000, MIN_RATE) < MAX_TIME / 10);
        assert!(tx_time_f(64, MAX_RATE) >= 1);
    }

    #[test]
    fn rates_and_bytes() {
        assert_eq!(parse_rate("10Gbps").unwrap(), 10e9);
        assert_eq!(parse_rate("0.5Gbps").unwrap(), 0.5e9);
        assert_eq!(parse_rate("1.05Gbps").unwrap(), 1.05e9);
        assert_eq!(parse_rate("5Mbps").unwrap(), 5e6);
        assert!(parse_rate("10G").is_err());
        assert_eq!(parse_bytes("150KB").unwrap(), 150_000);
        assert_eq!(parse_bytes("312B").unwrap(), 312);
        assert_eq!(parse_bytes("1.5KB").unwrap(), 1500);
        assert_eq!(parse_bytes("1KiB").unwrap(), 1024);
        assert!(parse_bytes("0.5B").is_err());
        assert!(parse_bytes("150").is_err());
    }

    #[test]
    fn serialisation_time_rounds_up() {
        assert_eq!(tx_time(1500, 10_000_000_000), 1_200_000);
        assert_eq!(tx_time(1, 3), 2_666_666_666_667);
        assert_eq!(fmt_time(500_000), "500ns");
        assert_eq!(fmt_time(2 * SEC), "2s");
    }
}
