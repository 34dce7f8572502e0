//! `[cc.timely]`: TIMELY's parameters (docs/models/timely.md; proto/timely.rs). The keys are
//! defined in the parameter table (params.rs, `cc.timely.*`). The section is read and checked
//! with every scenario; `cc.mode = "timely"` runs it (sim/cc/delay.rs).

use super::params::{self, spec, TM};
use super::reader::{show, Res, TableReader};
use super::{Scenario, ScenarioError};
use crate::proto::timely::{Sampling, StepScaling, TimelyParams};
use crate::units;
use serde_json::Value as Json;

/// The TIMELY configuration of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelySpec {
    /// Algorithm 1's parameters; `max_rate_bps` (the line rate) is filled in per flow.
    pub params: TimelyParams,
    /// The rate at a flow's start (`None`: the line rate).
    pub start_rate_bps: Option<f64>,
    /// One start rate per flow (in the order of `[[flows]]` after expansion), when
    /// `start_rate` is a list; empty otherwise.
    pub start_rates: Vec<f64>,
}

impl Default for TimelySpec {
    fn default() -> Self {
        let t = toml::Table::new();
        read(&mut TableReader::new(TM, &t)).expect("the defaults are valid")
    }
}

impl TimelySpec {
    /// The parameters of a flow whose NIC runs at `line_rate_bps`.
    pub fn for_flow(&self, line_rate_bps: f64) -> TimelyParams {
        TimelyParams {
            max_rate_bps: line_rate_bps,
            min_rate_bps: self.params.min_rate_bps.min(line_rate_bps),
            ..self.params.clone()
        }
    }

    /// The rate flow `i` starts at on a NIC of `line_rate_bps` (clamped by `Timely::new`).
    pub fn start_of(&self, i: usize, line_rate_bps: f64) -> f64 {
        match self.start_rates.get(i) {
            Some(&r) => r,
            None => self.start_rate_bps.unwrap_or(line_rate_bps),
        }
    }
}

/// Read `[cc.timely]`.
pub fn read(t: &mut TableReader) -> Res<TimelySpec> {
    let f = |k: &str| spec(TM, k);
    let p = TimelyParams {
        alpha: params::read_f64(t, f("alpha"))?,
        beta: params::read_f64(t, f("beta"))?,
        delta_bps: params::read_rate(t, f("delta"))?,
        t_low_ps: params::read_time(t, f("t_low"))?,
        t_high_ps: params::read_time(t, f("t_high"))?,
        min_rtt_ps: params::read_time(t, f("min_rtt"))?,
        seg_bytes: params::read_bytes(t, f("seg"))?,
        hai_threshold: params::read_int(t, f("hai_threshold"))? as u32,
        hai_factor: params::read_f64(t, f("hai_factor"))?,
        min_rate_bps: params::read_rate(t, f("min_rate"))?,
        max_rate_bps: f64::INFINITY,
        sampling: Sampling::from_name(&params::read_choice(t, f("sampling"))?)
            .expect("a listed sampling rule"),
        step_scaling: StepScaling::from_name(&params::read_choice(t, f("step_scaling"))?)
            .expect("a listed step scaling"),
    };
    if p.t_high_ps <= p.t_low_ps {
        return Err(t.err(
            "t_high",
            format!("\"{}\"", units::fmt_time(p.t_high_ps)),
            format!("a time above t_low ({})", units::fmt_time(p.t_low_ps)),
        ));
    }
    let (start_rate_bps, start_rates) = read_start_rate(t)?;
    Ok(TimelySpec {
        params: p,
        start_rate_bps,
        start_rates,
    })
}

/// `start_rate`: `"line"` (`None`) or a rate.
fn read_start_rate(t: &mut TableReader) -> Res<(Option<f64>, Vec<f64>)> {
    let key = spec(TM, "start_rate").key;
    let allowed = "\"line\", a rate such as \"5Gbps\", or a list of rates (one per flow)";
    let one = |v: &toml::Value| match v {
        toml::Value::String(s) => units::parse_rate(s).ok().filter(|&r| r > 0.0),
        _ => None,
    };
    let (r, list) = match t.raw(key) {
        None => (None, Vec::new()),
        Some(toml::Value::String(v)) if v == "line" => (None, Vec::new()),
        Some(toml::Value::Array(a)) if !a.is_empty() => {
            let mut list = Vec::with_capacity(a.len());
            for v in a {
                match one(v) {
                    Some(r) => list.push(r),
                    None => return Err(t.err(key, show(v), allowed)),
                }
            }
            (None, list)
        }
        Some(v) => match one(v) {
            Some(r) => (Some(r), Vec::new()),
            None => return Err(t.err(key, show(v), allowed)),
        },
    };
    let shown = if list.is_empty() {
        Json::String(r.map_or("line".into(), units::fmt_rate))
    } else {
        Json::Array(
            list.iter()
                .map(|&x| Json::String(units::fmt_rate(x)))
                .collect(),
        )
    };
    t.put(key, shown);
    Ok((r, list))
}

/// `cc.mode = "timely"`: a list of start rates has one rate per flow (the flows' checks of an
/// acknowledged mode are `cc::check_acked`'s).
pub(super) fn check_timely(sc: &Scenario) -> Res<()> {
    let n = sc.timely.start_rates.len();
    if n > 0 && n != sc.flows.len() {
        return Err(ScenarioError::new(
            "cc.timely.start_rate",
            format!("a list of {n} rates"),
            format!(
                "\"line\", one rate, or a list of {} rates (one per flow, in the order of \
                 [[flows]] after expansion)",
                sc.flows.len()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    fn read_str(text: &str) -> Res<(TimelySpec, serde_json::Map<String, Json>)> {
        let t: toml::Table = text.parse().expect("TOML");
        let mut r = TableReader::new(TM, &t);
        let s = read(&mut r)?;
        Ok((s, r.finish()?))
    }

    #[test]
    fn defaults_are_the_sourced_values() {
        let (s, resolved) = read_str("").unwrap();
        assert_eq!(
            s.params,
            TimelyParams {
                max_rate_bps: f64::INFINITY,
                ..TimelyParams::paper(f64::INFINITY)
            }
        );
        assert_eq!(s.start_rate_bps, None);
        assert_eq!(resolved["start_rate"], Json::String("line".into()));
        assert_eq!(resolved["sampling"], Json::String("segment".into()));
        assert_eq!(resolved["step_scaling"], Json::String("min_rtt".into()));
        // per flow: the line rate is the ceiling
        let p = s.for_flow(25e9);
        assert_eq!(p.max_rate_bps, 25e9);
        assert!(p.validate().is_ok());
    }

    #[test]
    fn values_are_read() {
        let (s, _) = read_str(
            r#"
alpha = 0.02
beta = 0.5
delta = "50Mbps"
t_low = "0us"
t_high = "1ms"
min_rtt = "10us"
seg = "16KB"
sampling = "rtt"
step_scaling = "none"
hai_threshold = 3
hai_factor = 10.0
min_rate = "1Gbps"
start_rate = "5Gbps"
"#,
        )
        .unwrap();
        let p = &s.params;
        assert_eq!(
            (p.alpha, p.beta, p.delta_bps, p.t_low_ps, p.t_high_ps),
            (0.02, 0.5, 50e6, 0, 1000 * US)
        );
        assert_eq!(
            (p.min_rtt_ps, p.seg_bytes, p.sampling, p.hai_threshold),
            (10 * US, 16_000, Sampling::Rtt, 3)
        );
        assert_eq!((p.hai_factor, p.min_rate_bps), (10.0, 1e9));
        assert_eq!(p.step_scaling, StepScaling::None);
        assert_eq!(s.start_rate_bps, Some(5e9));
        assert!(s.start_rates.is_empty());
        let (s, r) = read_str("start_rate = [\"7Gbps\", \"3Gbps\"]").unwrap();
        assert_eq!(s.start_rates, vec![7e9, 3e9]);
        assert_eq!((s.start_of(0, 10e9), s.start_of(1, 10e9)), (7e9, 3e9));
        assert_eq!(r["start_rate"], serde_json::json!(["7Gbps", "3Gbps"]));
    }

    #[test]
    fn errors_name_field_value_and_allowed() {
        // (text, field, value shown, words of the allowed values)
        let cases: &[(&str, &str, &str, &str)] = &[
            ("alpha = 1.5", "cc.timely.alpha", "1.5", "a number from"),
            ("beta = 0", "cc.timely.beta", "0", "a number from"),
            (
                "t_high = \"40us\"",
                "cc.timely.t_high",
                "40us",
                "above t_low",
            ),
            (
                "sampling = \"packet\"",
                "cc.timely.sampling",
                "packet",
                "segment",
            ),
            ("hai_threshold = 0", "cc.timely.hai_threshold", "0", "1"),
            (
                "step_scaling = \"always\"",
                "cc.timely.step_scaling",
                "always",
                "min_rtt",
            ),
            ("seg = \"10B\"", "cc.timely.seg", "10B", "64B"),
            (
                "start_rate = \"fast\"",
                "cc.timely.start_rate",
                "fast",
                "\"line\"",
            ),
            ("start_rate = 5", "cc.timely.start_rate", "5", "\"line\""),
            (
                "start_rate = [\"1Gbps\", 3]",
                "cc.timely.start_rate",
                "3",
                "a list of rates",
            ),
            ("delta = \"-1Mbps\"", "cc.timely.delta", "-1Mbps", "rate"),
            ("t_lo = \"1us\"", "cc.timely.t_lo", "unknown", "t_low"),
        ];
        for (text, field, value, allowed) in cases {
            let e = read_str(text).expect_err(text);
            assert_eq!(e.path, *field, "{text}: {e}");
            let msg = e.to_string();
            assert!(msg.contains(value), "{text}: {msg}");
            assert!(msg.contains(allowed), "{text}: {msg}");
        }
    }

    const SCENARIO: &str = r#"
[meta]
name = "t"
duration = "1ms"
[[switches]]
name = "sw"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
between = ["a", "sw"]
[[links]]
between = ["sw", "b"]
[[flows]]
src = "a"
dst = "b"
traffic = "greedy"
"#;

    #[test]
    fn sections_are_read_with_the_scenario() {
        // [cc.timely] and [cc.swift] are read whatever cc.mode; in run.json when given (or run)
        let text = format!("{SCENARIO}\n[cc.timely]\nalpha = 0.02\n");
        let sc = crate::scenario::load(&text, &["cc.swift.ai=2".into()]).unwrap();
        assert_eq!(sc.timely.params.alpha, 0.02);
        assert_eq!(sc.swift.params.ai, 2.0);
        let cc = &sc.resolved["cc"];
        assert_eq!(cc["timely"]["alpha"], serde_json::json!(0.02));
        assert_eq!(cc["timely"]["seg"], serde_json::json!("64000B"));
        assert_eq!(cc["swift"]["ai"], serde_json::json!(2.0));
        let plain = crate::scenario::load(SCENARIO, &[]).unwrap();
        assert!(plain.resolved["cc"].get("timely").is_none());
        assert!(plain.resolved["cc"].get("swift").is_none());
        assert_eq!(plain.timely, TimelySpec::default());
        // a typo is an error naming the field
        let e = crate::scenario::load(SCENARIO, &["cc.timely.alfa=0.1".into()]).unwrap_err();
        assert_eq!(e.path, "cc.timely.alfa");
        let e = crate::scenario::load(SCENARIO, &["cc.swift.max_mdf=2".into()]).unwrap_err();
        assert_eq!(e.path, "cc.swift.max_mdf");
    }
}
