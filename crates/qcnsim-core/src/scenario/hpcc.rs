//! `[cc.hpcc]`: the parameters of HPCC's sender (proto/hpcc.rs, docs/models/hpcc.md).
//!
//! Read by cc.rs (as `[cc.dcqcn]` is) and run with `cc.mode = "hpcc"` on the ACK/window
//! transport (sim/cc/e2e.rs, sim/cc/hpcc.rs). [`check_hpcc`] checks the flows once all is read:
//! unicast go-back-N flows, `min_rate` within each sender's line rate, and a path of at most
//! `MAX_INT_HOPS` switch hops (one INT record each). The simulator resolves
//! [`HpccSpec::base_rtt`] per flow (sim/cc/hpcc.rs).
//!
//! The keys are rows of the parameter table `params::PARAMS` (section `cc.hpcc`: kind, unit,
//! range, default, source, help).

use super::params::{self, Kind, ParamSpec};
use super::reader::{self, Res, TableReader};
use super::{Scenario, ScenarioError};
use crate::proto::ack::MAX_INT_HOPS;
use crate::proto::hpcc::{w_ai_rule, HpccParams, QlenSample, DEFAULT_N};
use crate::units::{self, SimTime};
use serde_json::Value as Json;

/// The section of the keys.
pub use super::params::HPCC;

/// The keys of `[cc.hpcc]`: its rows of `params::PARAMS` (docs/parameters.md).
pub fn hpcc_params() -> impl Iterator<Item = &'static ParamSpec> {
    params::PARAMS.iter().filter(|p| p.section == HPCC)
}

/// The entry of `key` of `[cc.hpcc]` in `params::PARAMS`.
pub fn spec(key: &str) -> &'static ParamSpec {
    params::spec(HPCC, key)
}

/// `base_rtt`: which `T` a sender uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseRtt {
    /// The largest base RTT between two hosts of the scenario (ns-3 `GLOBAL_T 1`).
    Global,
    /// Each flow's own path (ns-3 `GLOBAL_T 0`).
    Path,
    /// This value for every flow.
    Fixed(SimTime),
}

/// `w_ai`: the additive increase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WAi {
    /// `W_init (1 - eta) / n_flows`, per sender.
    Rule,
    /// This many bytes.
    Bytes(u64),
}

/// `[cc.hpcc]` as read.
#[derive(Debug, Clone, PartialEq)]
pub struct HpccSpec {
    pub eta: f64,
    pub max_stage: u32,
    pub w_ai: WAi,
    pub n_flows: u32,
    pub base_rtt: BaseRtt,
    pub min_rate_bps: f64,
    pub u_init: f64,
    pub qlen: QlenSample,
    pub fast_react: bool,
    pub sample_feedback: bool,
    pub multi_rate: bool,
    pub rate_bound: bool,
    pub has_win: bool,
    pub int_bytes: u32,
    pub int_bytes_per_hop: u32,
    /// Each flow's send queue (the rate limiter's), bytes.
    pub rl_queue_bytes: u64,
}

impl HpccSpec {
    /// The defaults (the section empty or absent): the sender's own defaults
    /// ([`HpccParams::defaults`], at a line rate above the default lowest rate), so the values
    /// are written once; the reader's defaults (the parameter table) are checked against these
    /// by a test.
    pub fn off() -> HpccSpec {
        let d = HpccParams::defaults(f64::MAX, 0);
        HpccSpec {
            eta: d.eta,
            max_stage: d.max_stage,
            w_ai: WAi::Rule,
            n_flows: DEFAULT_N,
            base_rtt: BaseRtt::Global,
            min_rate_bps: d.min_rate_bps,
            u_init: d.u_init,
            qlen: d.qlen,
            fast_react: d.fast_react,
            sample_feedback: d.sample_feedback,
            multi_rate: d.multi_rate,
            rate_bound: d.rate_bound,
            has_win: d.has_win,
            int_bytes: d.int_bytes,
            int_bytes_per_hop: d.int_bytes_per_hop,
            rl_queue_bytes: 150_000,
        }
    }

    /// The sender parameters of a flow whose NIC sends at `line_rate_bps`, with the base RTT
    /// `t_ps` the caller resolved from [`HpccSpec::base_rtt`].
    pub fn params(&self, line_rate_bps: f64, t_ps: SimTime) -> HpccParams {
        let w_init = line_rate_bps / 8.0 * units::secs(t_ps);
        HpccParams {
            line_rate_bps,
            t_ps,
            eta: self.eta,
            max_stage: self.max_stage,
            w_ai_bytes: match self.w_ai {
                WAi::Rule => w_ai_rule(w_init, self.eta, self.n_flows),
                WAi::Bytes(b) => b as f64,
            },
            min_rate_bps: self.min_rate_bps,
            u_init: self.u_init,
            qlen: self.qlen,
            fast_react: self.fast_react,
            sample_feedback: self.sample_feedback,
            multi_rate: self.multi_rate,
            rate_bound: self.rate_bound,
            has_win: self.has_win,
            int_bytes: self.int_bytes,
            int_bytes_per_hop: self.int_bytes_per_hop,
        }
    }

    /// `min_rate` must not exceed the line rate of a sender (`what` names it in the error).
    pub fn check(&self, line_rate_bps: f64, what: &str) -> Res<()> {
        if self.min_rate_bps > line_rate_bps {
            return Err(ScenarioError::new(
                format!("{HPCC}.min_rate"),
                format!("{:?}", units::fmt_rate(self.min_rate_bps)),
                format!(
                    "a rate of at most {} (the line rate of {what})",
                    units::fmt_rate(line_rate_bps)
                ),
            ));
        }
        Ok(())
    }
}

/// `base_rtt`: `"global"`, `"path"` or a time of at least 1 ps.
fn read_base_rtt(t: &mut TableReader) -> Res<BaseRtt> {
    let s = spec("base_rtt");
    let Kind::Time { min } = s.kind else {
        unreachable!()
    };
    let allowed = format!(
        "\"global\", \"path\" or a time of at least {} (e.g. \"12us\")",
        units::fmt_time(min)
    );
    let v = match t.raw(s.key) {
        None => BaseRtt::Global,
        Some(toml::Value::String(v)) if v == "global" => BaseRtt::Global,
        Some(toml::Value::String(v)) if v == "path" => BaseRtt::Path,
        Some(toml::Value::String(v)) => match units::parse_time(v) {
            Ok(x) if x >= min => BaseRtt::Fixed(x),
            _ => return Err(t.err(s.key, format!("{v:?}"), allowed)),
        },
        Some(v) => return Err(t.err(s.key, reader::show(v), allowed)),
    };
    t.put(
        s.key,
        Json::String(match v {
            BaseRtt::Global => "global".into(),
            BaseRtt::Path => "path".into(),
            BaseRtt::Fixed(x) => units::fmt_time(x),
        }),
    );
    Ok(v)
}

/// Read `[cc.hpcc]` (every key optional; the defaults are those of its rows in `params::PARAMS`).
pub fn parse_hpcc(t: &mut TableReader) -> Res<HpccSpec> {
    let eta = params::read_f64(t, spec("eta"))?;
    let max_stage = params::read_int(t, spec("max_stage"))? as u32;
    let w_ai = match params::read_bytes_or_word(t, spec("w_ai"), "auto", "50B")? {
        None => WAi::Rule,
        Some(b) => WAi::Bytes(b),
    };
    let n_flows = params::read_int(t, spec("n_flows"))? as u32;
    let base_rtt = read_base_rtt(t)?;
    let min_rate_bps = params::read_rate(t, spec("min_rate"))?;
    let u_init = params::read_f64(t, spec("u_init"))?;
    let qlen =
        QlenSample::from_name(&params::read_choice(t, spec("qlen"))?).expect("a listed name");
    let fast_react = params::read_bool(t, spec("fast_react"))?;
    let sample_feedback = params::read_bool(t, spec("sample_feedback"))?;
    let multi_rate = params::read_bool(t, spec("multi_rate"))?;
    let rate_bound = params::read_bool(t, spec("rate_bound"))?;
    let has_win = params::read_bool(t, spec("has_win"))?;
    if !rate_bound && !has_win {
        return Err(t.err(
            "has_win",
            "false with rate_bound = false",
            "true, or rate_bound = true (with neither, HPCC limits nothing)",
        ));
    }
    let int_bytes = params::read_bytes(t, spec("int_bytes"))? as u32;
    let int_bytes_per_hop = params::read_bytes(t, spec("int_bytes_per_hop"))? as u32;
    let rl_queue_bytes = params::read_bytes(t, spec("rl_queue"))?;
    Ok(HpccSpec {
        eta,
        max_stage,
        w_ai,
        n_flows,
        base_rtt,
        min_rate_bps,
        u_init,
        qlen,
        fast_react,
        sample_feedback,
        multi_rate,
        rate_bound,
        has_win,
        int_bytes,
        int_bytes_per_hop,
        rl_queue_bytes,
    })
}

/// HPCC (its flows unicast go-back-N flows: `cc::check_acked`): each sender's line rate is at
/// least `min_rate`, and its path crosses at most `MAX_INT_HOPS`
/// switch egress ports (one INT record each).
pub(super) fn check_hpcc(sc: &Scenario) -> Res<()> {
    for (k, f) in sc.flows.iter().enumerate() {
        let nic = sc.links[f.path[0] / 2].rate_bps;
        sc.hpcc
            .check(nic, &format!("the source NIC of flow {:?}", f.name))?;
        let hops = f.path.len().saturating_sub(1);
        if hops > MAX_INT_HOPS {
            return Err(ScenarioError::new(
                format!("flows.{k}.path"),
                format!("a path of {hops} switch hops (flow {:?})", f.name),
                format!(
                    "at most {MAX_INT_HOPS} switch hops with cc.mode = \"hpcc\" (a data frame \
                     carries one INT record per switch egress port it leaves)"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    /// Read `text` as the body of `[cc.hpcc]`.
    fn read(text: &str) -> Res<(HpccSpec, serde_json::Map<String, Json>)> {
        let table: toml::Table = text.parse().expect("test TOML parses");
        let mut t = TableReader::new(HPCC, &table);
        let s = parse_hpcc(&mut t)?;
        Ok((s, t.finish()?))
    }

    fn err(text: &str) -> ScenarioError {
        read(text).expect_err("an error")
    }

    #[test]
    fn empty_section_gives_the_documented_defaults() {
        let (s, resolved) = read("").unwrap();
        // the reader's defaults (the parameter table's, docs/parameters.md) are `off()`'s
        assert_eq!(s, HpccSpec::off());
        // every key is recorded in the resolved scenario
        for p in hpcc_params() {
            assert!(resolved.contains_key(p.key), "{} not resolved", p.key);
        }
        assert_eq!(resolved["w_ai"], Json::String("auto".into()));
        assert_eq!(resolved["base_rtt"], Json::String("global".into()));
        // the defaults are HpccParams::defaults's
        let t = 12 * US;
        assert_eq!(s.params(1e11, t), HpccParams::defaults(1e11, t));
    }

    #[test]
    fn every_key_is_read() {
        let (s, r) = read(
            r#"
            eta = 0.99
            max_stage = 5
            w_ai = "80B"
            n_flows = 10
            base_rtt = "8.5us"
            min_rate = "100Mbps"
            u_init = 0.95
            qlen = "current"
            fast_react = false
            sample_feedback = true
            multi_rate = true
            rate_bound = false
            has_win = true
            int_bytes = "2B"
            int_bytes_per_hop = "8B"
            "#,
        )
        .unwrap();
        assert_eq!(s.eta, 0.99);
        assert_eq!(s.max_stage, 5);
        assert_eq!(s.w_ai, WAi::Bytes(80));
        assert_eq!(s.n_flows, 10);
        assert_eq!(s.base_rtt, BaseRtt::Fixed(8_500_000));
        assert_eq!(s.min_rate_bps, 1e8);
        assert_eq!(s.u_init, 0.95);
        assert_eq!(s.qlen, QlenSample::Current);
        assert!(!s.fast_react && s.sample_feedback && s.multi_rate && !s.rate_bound && s.has_win);
        assert_eq!((s.int_bytes, s.int_bytes_per_hop), (2, 8));
        assert_eq!(r["base_rtt"], Json::String("8500ns".into()));
        assert_eq!(r["w_ai"], Json::String("80B".into()));
        let p = s.params(1e11, 10 * US);
        assert_eq!(p.w_ai_bytes, 80.0);
        assert_eq!(p.int_wire_bytes(5), 42);
        assert!(p.validate().is_ok());
        let (s, _) = read("base_rtt = \"path\"").unwrap();
        assert_eq!(s.base_rtt, BaseRtt::Path);
    }

    /// W_AI = W_init (1 - eta) / N per sender: 100 G x 12 us = 150 KB.
    #[test]
    fn w_ai_auto_follows_the_rule_per_sender() {
        let (s, _) = read("n_flows = 100\neta = 0.9").unwrap();
        let p = s.params(1e11, 12 * US);
        assert!((p.w_ai_bytes - 150.0).abs() < 1e-9);
        let p = s.params(25e9, 12 * US);
        assert!((p.w_ai_bytes - 37.5).abs() < 1e-9);
    }

    #[test]
    fn errors_name_the_field_the_value_and_what_is_allowed() {
        // (section body, field, value as shown, a piece of what is allowed)
        let table: &[(&str, &str, &str, &str)] = &[
            ("eta = 1.5", "cc.hpcc.eta", "1.5", "a number from 0.01 to 1"),
            ("eta = \"95%\"", "cc.hpcc.eta", "\"95%\"", "a number"),
            (
                "max_stage = -1",
                "cc.hpcc.max_stage",
                "-1",
                "a whole number from 0 to 1000",
            ),
            (
                "w_ai = \"lots\"",
                "cc.hpcc.w_ai",
                "\"lots\"",
                "\"auto\" or a size",
            ),
            ("w_ai = 80", "cc.hpcc.w_ai", "80", "\"auto\" or a size"),
            (
                "n_flows = 0",
                "cc.hpcc.n_flows",
                "0",
                "a whole number from 1",
            ),
            (
                "base_rtt = \"soon\"",
                "cc.hpcc.base_rtt",
                "\"soon\"",
                "\"global\", \"path\"",
            ),
            (
                "base_rtt = \"0us\"",
                "cc.hpcc.base_rtt",
                "\"0us\"",
                "at least 1ps",
            ),
            ("base_rtt = 12", "cc.hpcc.base_rtt", "12", "or a time"),
            (
                "min_rate = \"0Gbps\"",
                "cc.hpcc.min_rate",
                "\"0Gbps\"",
                "above zero",
            ),
            (
                "min_rate = \"fast\"",
                "cc.hpcc.min_rate",
                "\"fast\"",
                "Gbps",
            ),
            ("u_init = -0.5", "cc.hpcc.u_init", "-0.5", "from 0 to 100"),
            (
                "qlen = \"max\"",
                "cc.hpcc.qlen",
                "\"max\"",
                "one of: min, current",
            ),
            ("fast_react = 1", "cc.hpcc.fast_react", "1", "true or false"),
            (
                "rate_bound = false\nhas_win = false",
                "cc.hpcc.has_win",
                "false with rate_bound = false",
                "true, or rate_bound = true",
            ),
            (
                "int_bytes = \"2KB\"",
                "cc.hpcc.int_bytes",
                "\"2000B\"",
                "0B to 1024B",
            ),
            (
                "int_bytes_per_hop = \"-8B\"",
                "cc.hpcc.int_bytes_per_hop",
                "\"-8B\"",
                "0 or more",
            ),
            (
                "maxStage = 5",
                "cc.hpcc.maxStage",
                "an unknown key",
                "max_stage",
            ),
        ];
        for &(body, field, value, allowed) in table {
            let e = err(body);
            assert_eq!(e.path, field, "{body}: {e}");
            assert_eq!(e.value, value, "{body}: {e}");
            assert!(e.allowed.contains(allowed), "{body}: {e}");
        }
    }

    #[test]
    fn min_rate_is_checked_against_each_senders_line_rate() {
        let (s, _) = read("min_rate = \"40Gbps\"").unwrap();
        assert!(s.check(1e11, "host h1").is_ok());
        let e = s.check(25e9, "host h1").unwrap_err();
        assert_eq!(e.path, "cc.hpcc.min_rate");
        assert!(e.allowed.contains("host h1"), "{e}");
    }

    /// docs/models/hpcc.md's parameter table names every key with its default.
    #[test]
    fn model_page_lists_every_key() {
        let doc = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/models/hpcc.md"
        ))
        .expect("docs/models/hpcc.md is readable");
        for p in hpcc_params() {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| `{}` |", p.key)))
                .unwrap_or_else(|| panic!("docs/models/hpcc.md has no row for `{}`", p.key));
            assert!(
                row.contains(&format!("`{}`", p.default)),
                "the row of `{}` does not give its default `{}`",
                p.key,
                p.default
            );
        }
    }
}
