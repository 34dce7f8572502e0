//! `[cc.swift]`: Swift's parameters (docs/models/swift.md; proto/swift.rs). The keys are
//! defined in the parameter table (params.rs, `cc.swift.*`). The section is read and checked
//! with every scenario; `cc.mode = "swift"` runs it (sim/cc/delay.rs).

use super::params::{self, spec, Kind, SW};
use super::reader::{show, Res, TableReader};
use crate::proto::swift::{LastDecrease, SwiftParams};
use crate::units::{self, SimTime};
use serde_json::Value as Json;

/// The Swift configuration of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct SwiftSpec {
    /// Algorithm 1's parameters; `mss_bytes` and `line_rate_bps` are filled in per flow.
    pub params: SwiftParams,
    /// Both windows at a flow's start, packets.
    pub start_cwnd: f64,
    /// The transport's window check for Swift's flows: a frame leaves when the bytes in flight
    /// with it are at most the window (`true`, `"after_send"`), or when those before it are
    /// below the window (`false`, `"before_send"`). Nothing in flight: a frame always leaves.
    pub check_after_send: bool,
    /// The receiving host's delay from a data frame's arrival to the ACK (or NACK) it makes
    /// leaving, ps: the endpoint delay each ACK echoes (0: no host delay modelled).
    pub rx_delay_ps: SimTime,
}

impl Default for SwiftSpec {
    fn default() -> Self {
        let t = toml::Table::new();
        read(&mut TableReader::new(SW, &t)).expect("the defaults are valid")
    }
}

impl SwiftSpec {
    /// The parameters of a flow of `mss_bytes` packets on a NIC of `line_rate_bps`.
    pub fn for_flow(&self, mss_bytes: u32, line_rate_bps: f64) -> SwiftParams {
        SwiftParams {
            mss_bytes,
            line_rate_bps,
            ..self.params.clone()
        }
    }
}

/// Read `[cc.swift]`.
pub fn read(t: &mut TableReader) -> Res<SwiftSpec> {
    let f = |k: &str| spec(SW, k);
    let p = SwiftParams {
        ai: params::read_f64(t, f("ai"))?,
        beta: params::read_f64(t, f("beta"))?,
        max_mdf: params::read_f64(t, f("max_mdf"))?,
        base_target_ps: params::read_time(t, f("base_target"))?,
        h_ps: params::read_time(t, f("h"))? as f64,
        fs_range_ps: params::read_time(t, f("fs_range"))? as f64,
        fs_min_cwnd: params::read_f64(t, f("fs_min_cwnd"))?,
        fs_max_cwnd: params::read_f64(t, f("fs_max_cwnd"))?,
        endpoint_target_ps: read_endpoint_target(t)?,
        retx_reset_threshold: params::read_int(t, f("retx_reset_threshold"))? as u32,
        min_cwnd: params::read_f64(t, f("min_cwnd"))?,
        max_cwnd: params::read_f64(t, f("max_cwnd"))?,
        last_decrease: LastDecrease::from_name(&params::read_choice(t, f("last_decrease"))?)
            .expect("a listed rule"),
        mss_bytes: 1,
        line_rate_bps: f64::INFINITY,
    };
    let start_cwnd = params::read_f64(t, f("start_cwnd"))?;
    let check_after_send = params::read_choice(t, f("window_check"))? == "after_send";
    let rx_delay_ps = params::read_time(t, f("rx_delay"))?;
    if p.fs_max_cwnd <= p.fs_min_cwnd {
        return Err(t.err(
            "fs_max_cwnd",
            p.fs_max_cwnd.to_string(),
            format!("a number above fs_min_cwnd ({})", p.fs_min_cwnd),
        ));
    }
    if p.max_cwnd < p.min_cwnd {
        return Err(t.err(
            "max_cwnd",
            p.max_cwnd.to_string(),
            format!("a number of at least min_cwnd ({})", p.min_cwnd),
        ));
    }
    Ok(SwiftSpec {
        params: p,
        start_cwnd,
        check_after_send,
        rx_delay_ps,
    })
}

/// `endpoint_target`: a time (default 20 us) or `"off"` (no endpoint window).
fn read_endpoint_target(t: &mut TableReader) -> Res<Option<SimTime>> {
    let s = spec(SW, "endpoint_target");
    let Kind::Time { min } = s.kind else {
        unreachable!()
    };
    let allowed = format!("\"off\" or a time of at least {}", units::fmt_time(min));
    let v = match t.raw(s.key) {
        None => Some(units::parse_time(s.default).expect("default parses")),
        Some(toml::Value::String(v)) if v == "off" => None,
        Some(toml::Value::String(v)) => match units::parse_time(v) {
            Ok(x) if x >= min => Some(x),
            _ => return Err(t.err(s.key, format!("{v:?}"), allowed)),
        },
        Some(v) => return Err(t.err(s.key, show(v), allowed)),
    };
    t.put(s.key, Json::String(v.map_or("off".into(), units::fmt_time)));
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    fn read_str(text: &str) -> Res<(SwiftSpec, serde_json::Map<String, Json>)> {
        let t: toml::Table = text.parse().expect("TOML");
        let mut r = TableReader::new(SW, &t);
        let s = read(&mut r)?;
        Ok((s, r.finish()?))
    }

    #[test]
    fn defaults_are_the_sourced_values() {
        let (s, resolved) = read_str("").unwrap();
        let d = SwiftParams::defaults(1, f64::INFINITY);
        assert_eq!(s.params, d);
        assert_eq!(s.start_cwnd, 12.0);
        assert_eq!(resolved["endpoint_target"], Json::String("20us".into()));
        assert_eq!(resolved["last_decrease"], Json::String("decrease".into()));
        assert_eq!(resolved["window_check"], Json::String("after_send".into()));
        assert!(s.check_after_send);
        assert_eq!(s.rx_delay_ps, 0);
        let p = s.for_flow(4096, 100e9);
        assert_eq!((p.mss_bytes, p.line_rate_bps), (4096, 100e9));
        assert!(p.validate().is_ok());
    }

    #[test]
    fn values_are_read() {
        let (s, resolved) = read_str(
            r#"
ai = 0.5
beta = 0.4
max_mdf = 0.25
base_target = "10us"
h = "1us"
fs_range = "50us"
fs_min_cwnd = 0.01
fs_max_cwnd = 50
endpoint_target = "off"
retx_reset_threshold = 3
min_cwnd = 0.01
max_cwnd = 64
start_cwnd = 1
last_decrease = "not_increase"
window_check = "before_send"
rx_delay = "5us"
"#,
        )
        .unwrap();
        let p = &s.params;
        assert_eq!(
            (p.ai, p.beta, p.max_mdf, p.base_target_ps, p.h_ps),
            (0.5, 0.4, 0.25, 10 * US, 1e6)
        );
        assert_eq!(
            (
                p.fs_range_ps,
                p.fs_min_cwnd,
                p.fs_max_cwnd,
                p.endpoint_target_ps
            ),
            (50e6, 0.01, 50.0, None)
        );
        assert_eq!(
            (
                p.retx_reset_threshold,
                p.min_cwnd,
                p.max_cwnd,
                p.last_decrease
            ),
            (3, 0.01, 64.0, LastDecrease::NotIncrease)
        );
        assert_eq!(s.start_cwnd, 1.0);
        assert!(!s.check_after_send);
        assert_eq!(s.rx_delay_ps, 5 * US);
        assert_eq!(resolved["endpoint_target"], Json::String("off".into()));
    }

    #[test]
    fn errors_name_field_value_and_allowed() {
        // (text, field, value shown, words of the allowed values)
        let cases: &[(&str, &str, &str, &str)] = &[
            ("max_mdf = 1.0", "cc.swift.max_mdf", "1", "a number from"),
            ("ai = -1", "cc.swift.ai", "-1", "a number from"),
            (
                "fs_max_cwnd = 0.05",
                "cc.swift.fs_max_cwnd",
                "0.05",
                "above fs_min_cwnd",
            ),
            (
                "max_cwnd = 0.0001",
                "cc.swift.max_cwnd",
                "0.0001",
                "at least min_cwnd",
            ),
            (
                "endpoint_target = \"never\"",
                "cc.swift.endpoint_target",
                "never",
                "\"off\"",
            ),
            (
                "endpoint_target = 5",
                "cc.swift.endpoint_target",
                "5",
                "\"off\"",
            ),
            (
                "last_decrease = \"less\"",
                "cc.swift.last_decrease",
                "less",
                "not_increase",
            ),
            (
                "retx_reset_threshold = 0",
                "cc.swift.retx_reset_threshold",
                "0",
                "1",
            ),
            ("h = \"fast\"", "cc.swift.h", "fast", "time"),
            (
                "fs_rang = \"1us\"",
                "cc.swift.fs_rang",
                "unknown",
                "fs_range",
            ),
        ];
        for (text, field, value, allowed) in cases {
            let e = read_str(text).expect_err(text);
            assert_eq!(e.path, *field, "{text}: {e}");
            let msg = e.to_string();
            assert!(msg.contains(value), "{text}: {msg}");
            assert!(msg.contains(allowed), "{text}: {msg}");
        }
    }
}
