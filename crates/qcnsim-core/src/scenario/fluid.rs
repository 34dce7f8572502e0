//! `[fluid]`: settings of the fluid-model solver (docs/models/fluid.md). The table is read and
//! checked with every scenario (a typo fails early), but it only matters to
//! [`crate::fluid::run`]; a packet-level run ignores it. The network quantities the fluid
//! models need (N, C, the feedback delay) are derived from the scenario by
//! [`crate::fluid::Inputs::from_scenario`] when the fluid solver runs.

use super::params::{self, spec, FLUID, FLUID_DCQCN, FLUID_QCN, FLUID_TIMELY};
use super::reader::{show, Res, TableReader};
use super::{Scenario, ScenarioError};
use crate::units::{self, SimTime};
use serde_json::Value as Json;

/// At most this many steps of the fluid solver (`meta.duration / fluid.dt`): at the
/// 6 x 10^7 steps per second of wall time measured on dcqcn-fluid (docs/models/fluid.md),
/// about 16 s.
pub const MAX_STEPS: u64 = 1_000_000_000;

/// `fluid.dt` within what the solver can do: not above `meta.duration` (no step at all), and
/// at most [`MAX_STEPS`] steps over it.
pub fn check_dt(sc: &Scenario) -> Res<()> {
    let (dt, d) = (sc.fluid.dt_ps, sc.duration);
    let shown = format!("\"{}\"", units::fmt_time(dt));
    if dt > d {
        return Err(ScenarioError::new(
            "fluid.dt",
            shown,
            format!(
                "a step at most meta.duration ({}): a larger one takes no step at all",
                units::fmt_time(d)
            ),
        ));
    }
    let steps = d / dt;
    if steps > MAX_STEPS {
        return Err(ScenarioError::new(
            "fluid.dt",
            shown,
            format!(
                "a step of at least {} (meta.duration {} in at most {MAX_STEPS} steps): this \
                 one takes {steps:.2e} steps",
                units::fmt_time(d.div_ceil(MAX_STEPS)),
                units::fmt_time(d),
                steps = steps as f64
            ),
        ));
    }
    Ok(())
}

/// Keep the solver's `queue_samples` and `rp_rates` (one row per recorded step each) within
/// `metrics.max_sample_rows` rows, as the packet recorder keeps its sampled tables: a
/// `fluid.record_interval` that would record more is widened to the smallest whole multiple of
/// its step count that does (reported as a `warning_interval_widened` row of the fluid run's
/// summary). Returns the interval asked for and the one used when widened.
pub fn bound_rows(sc: &mut Scenario) -> Option<(SimTime, SimTime)> {
    let f = &mut sc.fluid;
    let dt = f.dt_ps.max(1);
    if dt > sc.duration {
        return None; // refused by check_dt
    }
    // the solver records every `rec` steps of `dt`, steps 0..=duration / dt
    // as the solver rounds it (fluid::steps)
    let rec = ((f.record_interval_ps as f64 / dt as f64).round() as u64).max(1);
    let nsteps = sc.duration / dt;
    let used = super::budget::decimate(nsteps, rec, 1, sc.metrics.max_sample_rows);
    if used == rec {
        return None;
    }
    let asked = f.record_interval_ps;
    f.record_interval_ps = used * dt;
    f.widened = Some((asked, f.record_interval_ps));
    f.widened
}

/// Which fluid model to integrate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FluidModel {
    Qcn,
    Dcqcn,
    Timely,
}

impl FluidModel {
    pub fn name(self) -> &'static str {
        match self {
            FluidModel::Qcn => "qcn",
            FluidModel::Dcqcn => "dcqcn",
            FluidModel::Timely => "timely",
        }
    }
}

/// The DCQCN fluid model's knobs (`[fluid.dcqcn]`), in scenario units.
#[derive(Debug, Clone, PartialEq)]
pub struct DcqcnKnobs {
    pub k_min_bytes: u64,
    pub k_max_bytes: u64,
    pub p_max: f64,
    pub g: f64,
    pub cnp_interval_ps: SimTime,
    pub alpha_interval_ps: SimTime,
    pub timer_ps: SimTime,
    pub byte_counter_bytes: u64,
    pub frt: u32,
    pub r_ai_bps: f64,
    /// Count bits instead of packets (the authors' MATLAB reading).
    pub per_bit: bool,
    /// `None`: the line rate.
    pub start_rate_bps: Option<f64>,
    pub alpha_start: f64,
}

/// The flows' rates at t = 0 in the TIMELY fluid model (`fluid.timely.start_rate`).
#[derive(Debug, Clone, PartialEq)]
pub enum StartRates {
    /// C/N each (the CoNEXT 2016 validation runs).
    Fair,
    /// The line rate each.
    Line,
    /// The same rate for every flow, bit/s.
    All(f64),
    /// One rate per flow through the bottleneck, in the order of `[[flows]]`, bit/s.
    Each(Vec<f64>),
}

/// The TIMELY fluid model's knobs (`[fluid.timely]`), in scenario units.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelyKnobs {
    pub alpha: f64,
    pub beta: f64,
    pub delta_bps: f64,
    pub t_low_ps: SimTime,
    pub t_high_ps: SimTime,
    pub min_rtt_ps: SimTime,
    pub seg_bytes: u64,
    /// At g = 0: increase (eq. 21, Algorithm 1's `≤`) or not (eq. 28, `<`).
    pub increase_at_zero: bool,
    pub start: StartRates,
    pub min_rate_bps: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FluidSpec {
    pub model: FluidModel,
    pub dt_ps: SimTime,
    /// `None`: the path's round trip.
    pub tau_ps: Option<SimTime>,
    pub record_interval_ps: SimTime,
    /// `record_interval` as asked and as widened by [`bound_rows`], when it was.
    pub widened: Option<(SimTime, SimTime)>,
    pub fb_saturate: bool,
    pub dcqcn: DcqcnKnobs,
    pub timely: TimelyKnobs,
}

impl Default for FluidSpec {
    fn default() -> Self {
        let t = toml::Table::new();
        read(&mut TableReader::new("fluid", &t)).expect("the defaults are valid")
    }
}

/// A rate or `"line"` (`None`).
fn rate_or_line(t: &mut TableReader, key: &'static str) -> Res<Option<f64>> {
    let allowed = "\"line\" or a rate such as \"1Gbps\"";
    let r = match t.raw(key) {
        None => None,
        Some(toml::Value::String(v)) if v == "line" => None,
        Some(toml::Value::String(v)) => match units::parse_rate(v) {
            Ok(r) if r > 0.0 => Some(r),
            _ => return Err(t.err(key, format!("{v:?}"), allowed)),
        },
        Some(v) => return Err(t.err(key, show(v), allowed)),
    };
    let shown = r.map_or("line".to_string(), units::fmt_rate);
    t.put(key, Json::String(shown));
    Ok(r)
}

/// `fluid.timely.start_rate`: `"fair"`, `"line"`, a rate, or a list of rates.
fn start_rates(t: &mut TableReader) -> Res<StartRates> {
    let key = "start_rate";
    let allowed = "\"fair\", \"line\", a rate such as \"5Gbps\", or a list of rates (one per flow \
                   through the bottleneck)";
    let rate = |t: &TableReader, k: &str, v: &toml::Value| -> Res<f64> {
        match v {
            toml::Value::String(s) => match units::parse_rate(s) {
                Ok(r) if r > 0.0 => Ok(r),
                _ => Err(t.err(k, format!("{s:?}"), allowed)),
            },
            v => Err(t.err(k, show(v), allowed)),
        }
    };
    let r = match t.raw(key) {
        None => StartRates::Fair,
        Some(toml::Value::String(v)) if v == "fair" => StartRates::Fair,
        Some(toml::Value::String(v)) if v == "line" => StartRates::Line,
        Some(toml::Value::Array(items)) => {
            if items.is_empty() {
                return Err(t.err(key, "an empty list", allowed));
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                out.push(rate(t, &format!("{key}.{i}"), v)?);
            }
            StartRates::Each(out)
        }
        Some(v) => StartRates::All(rate(t, key, v)?),
    };
    let shown = match &r {
        StartRates::Fair => Json::String("fair".into()),
        StartRates::Line => Json::String("line".into()),
        StartRates::All(x) => Json::String(units::fmt_rate(*x)),
        StartRates::Each(v) => Json::Array(
            v.iter()
                .map(|x| Json::String(units::fmt_rate(*x)))
                .collect(),
        ),
    };
    t.put(key, shown);
    Ok(r)
}

/// Read `[fluid]` (with `[fluid.qcn]`, `[fluid.dcqcn]` and `[fluid.timely]`).
pub fn read(t: &mut TableReader) -> Res<FluidSpec> {
    let model = match params::read_choice(t, spec(FLUID, "model"))?.as_str() {
        "dcqcn" => FluidModel::Dcqcn,
        "timely" => FluidModel::Timely,
        _ => FluidModel::Qcn,
    };
    let dt_ps = params::read_time(t, spec(FLUID, "dt"))?;
    let tau_ps = match t.raw("tau") {
        None => None,
        Some(toml::Value::String(v)) if v == "path" => None,
        Some(_) => Some(t.time_or("tau", 0)?),
    };
    if tau_ps.is_none() {
        t.put("tau", Json::String("path".into()));
    }
    let record_interval_ps = params::read_time(t, spec(FLUID, "record_interval"))?;
    let mut q = t.sub("qcn")?;
    let fb_saturate = params::read_bool(&mut q, spec(FLUID_QCN, "fb_saturate"))?;
    t.put("qcn", Json::Object(q.finish()?));
    let mut d = t.sub("dcqcn")?;
    let f = |k: &str| spec(FLUID_DCQCN, k);
    let dcqcn = DcqcnKnobs {
        k_min_bytes: params::read_bytes(&mut d, f("k_min"))?,
        k_max_bytes: params::read_bytes(&mut d, f("k_max"))?,
        p_max: params::read_f64(&mut d, f("p_max"))?,
        g: params::read_f64(&mut d, f("g"))?,
        cnp_interval_ps: params::read_time(&mut d, f("cnp_interval"))?,
        alpha_interval_ps: params::read_time(&mut d, f("alpha_interval"))?,
        timer_ps: params::read_time(&mut d, f("timer"))?,
        byte_counter_bytes: params::read_bytes(&mut d, f("byte_counter"))?,
        frt: params::read_int(&mut d, f("frt"))? as u32,
        r_ai_bps: params::read_rate(&mut d, f("r_ai"))?,
        per_bit: params::read_choice(&mut d, f("unit"))? == "bit",
        start_rate_bps: rate_or_line(&mut d, "start_rate")?,
        alpha_start: params::read_f64(&mut d, f("alpha_start"))?,
    };
    if dcqcn.k_max_bytes <= dcqcn.k_min_bytes {
        return Err(d.err(
            "k_max",
            format!("\"{}B\"", dcqcn.k_max_bytes),
            format!("a size above k_min ({}B)", dcqcn.k_min_bytes),
        ));
    }
    t.put("dcqcn", Json::Object(d.finish()?));
    let mut m = t.sub("timely")?;
    let f = |k: &str| spec(FLUID_TIMELY, k);
    let timely = TimelyKnobs {
        alpha: params::read_f64(&mut m, f("alpha"))?,
        beta: params::read_f64(&mut m, f("beta"))?,
        delta_bps: params::read_rate(&mut m, f("delta"))?,
        t_low_ps: params::read_time(&mut m, f("t_low"))?,
        t_high_ps: params::read_time(&mut m, f("t_high"))?,
        min_rtt_ps: params::read_time(&mut m, f("min_rtt"))?,
        seg_bytes: params::read_bytes(&mut m, f("seg"))?,
        increase_at_zero: params::read_choice(&mut m, f("zero_gradient"))? == "increase",
        start: start_rates(&mut m)?,
        min_rate_bps: params::read_rate(&mut m, f("min_rate"))?,
    };
    if timely.t_high_ps <= timely.t_low_ps {
        return Err(m.err(
            "t_high",
            format!("\"{}\"", units::fmt_time(timely.t_high_ps)),
            format!("a time above t_low ({})", units::fmt_time(timely.t_low_ps)),
        ));
    }
    t.put("timely", Json::Object(m.finish()?));
    Ok(FluidSpec {
        model,
        dt_ps,
        tau_ps,
        record_interval_ps,
        widened: None,
        fb_saturate,
        dcqcn,
        timely,
    })
}
