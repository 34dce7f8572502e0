//! Fluid (delay-differential) models of QCN, DCQCN and TIMELY, solved beside the packet-level
//! simulator as a cross-check (docs/models/fluid.md).
//!
//! * [`qcn`]: the QCN model of Alizadeh, Kabbani, Atikoglu and Prabhakar, "Stability analysis
//!   of QCN: the averaging principle" (SIGMETRICS 2011);
//! * [`dcqcn`]: the DCQCN model of Zhu, Ghobadi, Misra and Padhye, "ECN or Delay: lessons
//!   learnt from analysis of DCQCN and TIMELY" (CoNEXT 2016);
//! * [`timely`]: the TIMELY model of the same paper.
//!
//! The QCN and DCQCN models describe N identical, synchronised, always-backlogged sources
//! sharing one bottleneck of capacity C with a constant feedback delay τ; the TIMELY model has
//! one rate and gradient per flow and a feedback delay that grows with the queue. They are
//! integrated with fixed-step forward Euler (the right-hand sides switch discontinuously at
//! Fb = 0, q = Kmin or a TIMELY threshold, where adaptive solvers chatter) and a buffer of past
//! values for the delayed terms; the history before t = 0 is the initial state. A run is a pure function of the scenario: no randomness.
//!
//! [`run`] derives the models' inputs from a scenario ([`Inputs::from_scenario`]: N, C, τ,
//! packet size, buffer) and returns the same kind of tables as a packet run
//! (`queue_samples`, `rp_rates`, `summary`) plus `fluid_inputs`.

pub mod dcqcn;
pub mod qcn;
pub mod timely;

use crate::scenario::fluid::FluidModel;
use crate::scenario::ScenarioError;
use crate::scenario::{Capacity, NodeKind, Scenario};
use crate::table::{Column, ColumnData, RunOutput, Table};
use crate::units::{self, SimTime, SEC};

/// The value of a quantity `delay` steps ago: a ring buffer written once per step. Before the
/// first `delay` steps it returns the initial value (constant history).
#[derive(Debug, Clone)]
pub struct Delay<T: Copy> {
    buf: Vec<T>,
    pos: usize,
}

impl<T: Copy> Delay<T> {
    /// A delay line of `delay` steps whose history is `init`.
    pub fn new(delay: usize, init: T) -> Self {
        Delay {
            buf: vec![init; delay],
            pos: 0,
        }
    }

    /// Store this step's value `x` and return the value `delay` steps ago (`x` itself when the
    /// delay is 0).
    #[inline]
    pub fn push(&mut self, x: T) -> T {
        if self.buf.is_empty() {
            return x;
        }
        let old = std::mem::replace(&mut self.buf[self.pos], x);
        self.pos += 1;
        if self.pos == self.buf.len() {
            self.pos = 0;
        }
        old
    }
}

/// `(1 - p)^x` for p in [0, 1], x >= 0, accurate for small p.
#[inline]
pub(crate) fn pow1m(p: f64, x: f64) -> f64 {
    if p >= 1.0 {
        return if x > 0.0 { 0.0 } else { 1.0 };
    }
    (x * (-p).ln_1p()).exp()
}

/// The rate of increase events of a counter that expires every `n` un-marked units sent, for a
/// source sending `r` units/s of which each is marked with probability p: the mean volume
/// between expiries is ((1 - p)^(-n) - 1)/p, so the rate is `r p / ((1 - p)^(-n) - 1)`;
/// `r / n` when p = 0, 0 when p = 1.
#[inline]
pub(crate) fn expiry_rate(r: f64, p: f64, n: f64) -> f64 {
    if n <= 0.0 || r <= 0.0 {
        return 0.0;
    }
    if p <= 0.0 {
        return r / n;
    }
    if p >= 1.0 {
        return 0.0;
    }
    // (1-p)^(-n) - 1 = expm1(-n ln(1-p))
    let den = (-n * (-p).ln_1p()).exp_m1();
    if den.is_finite() && den > 0.0 {
        r * p / den
    } else {
        0.0
    }
}

/// The network quantities of the fluid models, derived from a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    /// Flows through the bottleneck.
    pub n: usize,
    /// Bottleneck capacity, bit/s.
    pub c_bps: f64,
    /// NIC line rate of the flows (the smallest), bit/s.
    pub line_bps: f64,
    /// Frame size of the flows, bytes.
    pub packet_bytes: f64,
    /// Feedback delay, ps (a multiple of no particular step; rounded by the solver).
    pub tau_ps: SimTime,
    /// Bottleneck buffer, bytes (infinite: `f64::INFINITY`).
    pub q_max_bytes: f64,
    /// Name of the bottleneck port.
    pub port: String,
    /// The flows through the bottleneck (the models' sources), in the order of `[[flows]]`.
    pub flow_names: Vec<String>,
}

impl Inputs {
    pub fn from_scenario(sc: &Scenario) -> Result<Inputs, ScenarioError> {
        let b = match sc.analysis.bottleneck {
            Some(b) => b,
            None => {
                let cps: Vec<usize> = (0..sc.n_ports())
                    .filter(|&p| sc.qcn.cp_ports.get(p).copied().unwrap_or(false))
                    .collect();
                if sc.fluid.model == FluidModel::Qcn && cps.len() == 1 {
                    cps[0]
                } else {
                    return Err(ScenarioError::new(
                        "analysis.bottleneck",
                        "missing",
                        "the port the fluid model's N sources share (needed by the fluid solver \
                         unless exactly one port runs a QCN CP)",
                    ));
                }
            }
        };
        if !sc.schedule.is_empty() {
            return Err(ScenarioError::new(
                "schedule",
                format!("{} entries", sc.schedule.len()),
                "no [[schedule]] for the fluid solver (its capacity is constant)",
            ));
        }
        let flows: Vec<_> = sc
            .flows
            .iter()
            .filter(|f| f.group.is_none() && f.path.contains(&b))
            .collect();
        let port = sc.port_name(b);
        if flows.is_empty() {
            return Err(ScenarioError::new(
                "analysis.bottleneck",
                format!("{port:?}"),
                "a port that at least one unicast flow crosses (the fluid model's sources)",
            ));
        }
        let packet = flows[0].frame_bytes;
        if let Some(f) = flows.iter().find(|f| f.frame_bytes != packet) {
            return Err(ScenarioError::new(
                "flows",
                format!("frames of {packet}B and {}B ({:?})", f.frame_bytes, f.name),
                "one frame size for all flows through the bottleneck (the fluid model's packet)",
            ));
        }
        let line_bps = flows
            .iter()
            .map(|f| sc.links[f.path[0] / 2].rate_bps)
            .fold(f64::INFINITY, f64::min);
        let c_bps = sc.links[b / 2].rate_bps;
        let tau_ps = match sc.fluid.tau_ps {
            Some(t) => t,
            None => {
                // DCQCN and TIMELY: to the destination and a 64 B CNP or ACK back
                let dcqcn = matches!(sc.fluid.model, FluidModel::Dcqcn | FluidModel::Timely);
                let taus: Vec<SimTime> = flows
                    .iter()
                    .map(|f| {
                        let upto = if dcqcn {
                            f.path.len()
                        } else {
                            f.path.iter().position(|&p| p == b).unwrap_or(0)
                        };
                        let ctrl = if dcqcn { 64 } else { sc.qcn.cnm_bytes as u64 };
                        path_round_trip(sc, &f.path[..upto], f.frame_bytes as u64, ctrl)
                    })
                    .collect();
                let (lo, hi) = (
                    *taus.iter().min().unwrap_or(&0),
                    *taus.iter().max().unwrap_or(&0),
                );
                if hi - lo > hi / 100 {
                    return Err(ScenarioError::new(
                        "fluid.tau",
                        "\"path\"",
                        format!(
                            "a time: the flows' round trips differ ({} to {}) and the fluid \
                             model has one feedback delay",
                            units::fmt_time(lo),
                            units::fmt_time(hi)
                        ),
                    ));
                }
                (taus.iter().map(|&t| t as u128).sum::<u128>() / taus.len() as u128) as SimTime
            }
        };
        let q_max_bytes = match sc.queue_limit(b) {
            Capacity::Bytes(x) => x as f64,
            Capacity::Frames(n) => (n * packet as u64) as f64,
            Capacity::Infinite => f64::INFINITY,
            Capacity::Shared => {
                return Err(ScenarioError::new(
                    "shared_buffer.size",
                    format!("\"{}B\"", sc.buffer.size.unwrap_or(0)),
                    "\"off\" for the fluid solver (its bottleneck queue has a fixed size; a \
                     switch memory shared by several ports is not modelled)",
                ));
            }
        };
        Ok(Inputs {
            n: flows.len(),
            c_bps,
            line_bps,
            packet_bytes: packet as f64,
            tau_ps,
            q_max_bytes,
            port,
            flow_names: flows.iter().map(|f| f.name.clone()).collect(),
        })
    }
}

/// The unloaded round trip over the egress ports `hops` (from the source NIC up to, not
/// including, the queue the feedback comes from): a data frame of `frame` bytes crosses each
/// hop (transmission, propagation, delay line, the receiving switch's latency), then a control
/// frame of `ctrl` bytes comes back over the reverse ports, plus `cc.feedback_latency`.
pub fn path_round_trip(sc: &Scenario, hops: &[usize], frame: u64, ctrl: u64) -> SimTime {
    let hop = |p: usize, bytes: u64| -> SimTime {
        let l = &sc.links[p / 2];
        let (_, to) = sc.port_ends(p);
        let lat = if sc.nodes[to].kind == NodeKind::Switch {
            sc.nodes[to].latency
        } else {
            0
        };
        units::tx_time_f(bytes + (l.preamble_bytes + l.ifg_bytes) as u64, l.rate_bps)
            + l.delay
            + l.extra_delay
            + lat
    };
    let fwd: SimTime = hops.iter().map(|&p| hop(p, frame)).sum();
    let back: SimTime = hops.iter().map(|&p| hop(p ^ 1, ctrl)).sum();
    fwd + back + sc.feedback_latency
}

/// The solution of a fluid model at the record instants (bytes and bit/s).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    pub t_ps: Vec<i64>,
    pub q_bytes: Vec<f64>,
    pub cr_bps: Vec<f64>,
    pub tr_bps: Vec<f64>,
    /// DCQCN only: α.
    pub alpha: Vec<f64>,
    /// TIMELY only: each flow's rate and gradient (`cr_bps` and `tr_bps` then hold the mean
    /// rate over the flows).
    pub flows: Vec<FlowTrace>,
}

/// One flow's rate and RTT gradient at the record instants (the TIMELY model).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowTrace {
    pub name: String,
    pub rate_bps: Vec<f64>,
    pub gradient: Vec<f64>,
}

impl Trace {
    /// Mean, minimum and maximum of the queue over [from, to) ps.
    pub fn queue_stats(&self, from: SimTime, to: SimTime) -> (f64, f64, f64) {
        window_stats(&self.t_ps, &self.q_bytes, from, to)
    }
    /// Mean, minimum and maximum of CR over [from, to) ps.
    pub fn rate_stats(&self, from: SimTime, to: SimTime) -> (f64, f64, f64) {
        window_stats(&self.t_ps, &self.cr_bps, from, to)
    }
}

fn window_stats(t: &[i64], x: &[f64], from: SimTime, to: SimTime) -> (f64, f64, f64) {
    let (mut s, mut n, mut lo, mut hi) = (0.0, 0usize, f64::INFINITY, f64::NEG_INFINITY);
    for (&ti, &xi) in t.iter().zip(x) {
        if ti >= from as i64 && ti < to as i64 {
            s += xi;
            n += 1;
            lo = lo.min(xi);
            hi = hi.max(xi);
        }
    }
    if n == 0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    (s / n as f64, lo, hi)
}

/// Steps of `dt` in `x` ps, rounded, at least `min`.
pub(crate) fn steps(x: SimTime, dt: SimTime, min: usize) -> usize {
    (((x as f64) / dt as f64).round() as usize).max(min)
}

fn str_col(n: usize, s: &str) -> ColumnData {
    ColumnData::Str(vec![s.to_string(); n])
}

/// The solvers' cheap periodic look at the clock: every 65,536 steps, and `progress` (the
/// fraction done; `false` cancels, e.g. Ctrl-C or SIGTERM) at most every 0.2 s of wall time,
/// as the packet run does (sim/mod.rs).
/// A solve the progress callback cancelled.
#[derive(Debug)]
pub struct Cancelled;

pub(crate) struct Tick {
    wall: std::time::Instant,
    last: f64,
}

impl Tick {
    pub(crate) fn new() -> Tick {
        Tick {
            wall: std::time::Instant::now(),
            last: 0.0,
        }
    }

    #[inline(always)]
    pub(crate) fn check(
        &mut self,
        k: usize,
        n: usize,
        progress: &mut dyn FnMut(f64) -> bool,
    ) -> Result<(), Cancelled> {
        if k & 0xFFFF == 0 {
            let el = self.wall.elapsed().as_secs_f64();
            if el - self.last >= 0.2 {
                self.last = el;
                if !progress(k as f64 / n.max(1) as f64) {
                    return Err(Cancelled);
                }
            }
        }
        Ok(())
    }
}

/// Solve the scenario's fluid model (`fluid.model`) over `meta.duration`.
pub fn run(sc: &Scenario) -> Result<RunOutput, ScenarioError> {
    // nothing cancels a solve without a progress callback
    Ok(run_with(sc, &mut |_| true)?.expect("not cancelled"))
}

/// [`run`], with `progress` called at most every 0.2 s (the fraction done; `false` cancels:
/// `Ok(None)`, nothing made).
pub fn run_with(
    sc: &Scenario,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<Option<RunOutput>, ScenarioError> {
    let wall = std::time::Instant::now();
    let inp = Inputs::from_scenario(sc)?;
    let f = &sc.fluid;
    let (trace, model_inputs, fixed, nsteps) = match f.model {
        FluidModel::Qcn => {
            let m = qcn::QcnFluid::from_scenario(sc, &inp);
            let (tr, n) = match m.solve(
                f.dt_ps,
                inp.tau_ps,
                sc.duration,
                f.record_interval_ps,
                progress,
            ) {
                Ok(x) => x,
                Err(Cancelled) => return Ok(None),
            };
            (tr, m.describe(), m.fixed_point(), n)
        }
        FluidModel::Dcqcn => {
            let m = dcqcn::DcqcnFluid::from_scenario(sc, &inp);
            let (tr, n) = match m.solve(
                f.dt_ps,
                inp.tau_ps,
                sc.duration,
                f.record_interval_ps,
                progress,
            ) {
                Ok(x) => x,
                Err(Cancelled) => return Ok(None),
            };
            (tr, m.describe(), m.fixed_point(), n)
        }
        FluidModel::Timely => {
            let m = timely::TimelyFluid::from_scenario(sc, &inp)?;
            let (tr, n) = match m.solve(f.dt_ps, sc.duration, f.record_interval_ps, progress) {
                Ok(x) => x,
                Err(Cancelled) => return Ok(None),
            };
            (tr, m.describe(), m.fixed_point(), n)
        }
    };
    let model = f.model.name();
    let rows = trace.t_ps.len();
    let mut tables = Vec::new();
    tables.push(
        Table::new("queue_samples")
            .col("port", str_col(rows, &inp.port))
            .col("t_ps", ColumnData::I64(trace.t_ps.clone()))
            .col("qlen_bytes", ColumnData::F64(trace.q_bytes.clone()))
            .col(
                "qlen_frames",
                ColumnData::F64(trace.q_bytes.iter().map(|q| q / inp.packet_bytes).collect()),
            ),
    );
    let rates = if trace.flows.is_empty() {
        let mut rates = Table::new("rp_rates")
            .col("flow", str_col(rows, "all"))
            .col("t_ps", ColumnData::I64(trace.t_ps.clone()))
            .col("cr_bps", ColumnData::F64(trace.cr_bps.clone()))
            .col("tr_bps", ColumnData::F64(trace.tr_bps.clone()))
            .col("n_flows", ColumnData::I64(vec![inp.n as i64; rows]));
        if f.model == FluidModel::Dcqcn {
            rates = rates.col("alpha", ColumnData::F64(trace.alpha.clone()));
        }
        rates
    } else {
        // one row per flow and instant (TIMELY: each flow has its own rate)
        let fl = &trace.flows;
        let each = |x: &dyn Fn(&FlowTrace) -> Vec<f64>| fl.iter().flat_map(x).collect::<Vec<_>>();
        Table::new("rp_rates")
            .col(
                "flow",
                ColumnData::Str(
                    fl.iter()
                        .flat_map(|f| std::iter::repeat_n(f.name.clone(), rows))
                        .collect(),
                ),
            )
            .col(
                "t_ps",
                ColumnData::I64(fl.iter().flat_map(|_| trace.t_ps.clone()).collect()),
            )
            .col("cr_bps", ColumnData::F64(each(&|f| f.rate_bps.clone())))
            .col("gradient", ColumnData::F64(each(&|f| f.gradient.clone())))
            .col(
                "n_flows",
                ColumnData::I64(vec![inp.n as i64; rows * fl.len()]),
            )
    };
    tables.push(rates);
    // the model's inputs, as derived (name, value, unit)
    let mut ins: Vec<(String, f64, String)> = vec![
        ("n_flows".into(), inp.n as f64, "".into()),
        ("capacity".into(), inp.c_bps, "bps".into()),
        ("line_rate".into(), inp.line_bps, "bps".into()),
        ("packet".into(), inp.packet_bytes, "B".into()),
        ("tau".into(), inp.tau_ps as f64 / SEC as f64, "s".into()),
        (
            "tau_used".into(),
            steps(inp.tau_ps, f.dt_ps, 0) as f64 * f.dt_ps as f64 / SEC as f64,
            "s".into(),
        ),
        ("dt".into(), f.dt_ps as f64 / SEC as f64, "s".into()),
        ("q_max".into(), inp.q_max_bytes, "B".into()),
    ];
    ins.extend(model_inputs);
    tables.push(
        Table::new("fluid_inputs")
            .col(
                "name",
                ColumnData::Str(ins.iter().map(|x| x.0.clone()).collect()),
            )
            .col("value", ColumnData::F64(ins.iter().map(|x| x.1).collect()))
            .col(
                "unit",
                ColumnData::Str(ins.iter().map(|x| x.2.clone()).collect()),
            ),
    );
    // summary over the statistics window
    let (from, to) = (sc.analysis.stats_from, sc.analysis.stats_to);
    let (qm, qlo, qhi) = trace.queue_stats(from, to);
    let (rm, rlo, rhi) = trace.rate_stats(from, to);
    let win = format!(
        "fluid {model}; {} from {} to {}",
        inp.port,
        units::fmt_time(from),
        units::fmt_time(to)
    );
    let mut m: Vec<(&str, f64, &str, String)> = vec![
        ("fluid_queue_mean", qm, "B", win.clone()),
        ("fluid_queue_min", qlo, "B", win.clone()),
        ("fluid_queue_max", qhi, "B", win.clone()),
        ("fluid_rate_mean", rm, "bps", win.clone()),
        ("fluid_rate_min", rlo, "bps", win.clone()),
        ("fluid_rate_max", rhi, "bps", win.clone()),
    ];
    // TIMELY: each flow's mean rate and the total over the window
    for fl in &trace.flows {
        let (rm, _, _) = window_stats(&trace.t_ps, &fl.rate_bps, from, to);
        m.push((
            "fluid_flow_rate_mean",
            rm,
            "bps",
            format!("{win}; flow {}", fl.name),
        ));
    }
    if !trace.flows.is_empty() {
        m.push((
            "fluid_total_rate_mean",
            rm * inp.n as f64,
            "bps",
            win.clone(),
        ));
    }
    for (name, v, unit) in &fixed {
        m.push((
            name,
            *v,
            unit,
            format!("fluid {model}: fixed point of the model"),
        ));
    }
    // a record interval widened to keep the tables within metrics.max_sample_rows
    // (scenario/fluid.rs `bound_rows`), as the packet recorder reports its own
    if let Some((asked, used)) = f.widened {
        m.push((
            "warning_interval_widened",
            used as f64 / SEC as f64,
            "s",
            format!(
                "fluid.record_interval = {} widened to {} ({} times) to keep queue_samples and \
                 rp_rates within metrics.max_sample_rows",
                units::fmt_time(asked),
                units::fmt_time(used),
                used / asked.max(1)
            ),
        ));
    }
    let summary = Table {
        name: "summary".into(),
        columns: vec![
            Column {
                name: "metric".into(),
                data: ColumnData::Str(m.iter().map(|x| x.0.to_string()).collect()),
            },
            Column {
                name: "value".into(),
                data: ColumnData::F64(m.iter().map(|x| x.1).collect()),
            },
            Column {
                name: "unit".into(),
                data: ColumnData::Str(m.iter().map(|x| x.2.to_string()).collect()),
            },
            Column {
                name: "detail".into(),
                data: ColumnData::Str(m.iter().map(|x| x.3.clone()).collect()),
            },
        ],
    };
    tables.insert(0, summary);
    let mut resolved = sc.resolved.clone();
    if let Some(o) = resolved.as_object_mut() {
        o.insert("solver".into(), serde_json::Value::String("fluid".into()));
    }
    Ok(Some(RunOutput {
        tables,
        resolved_json: serde_json::to_string_pretty(&resolved).unwrap_or_default(),
        seed: sc.seed,
        events: nsteps as u64,
        sim_time_ps: sc.duration,
        wall_s: wall.elapsed().as_secs_f64(),
        frames_forwarded: 0,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_line_returns_the_value_from_delay_steps_ago() {
        // (delay, values pushed, values returned)
        #[rustfmt::skip]
        let cases: &[(usize, &[i32], &[i32])] = &[
            (0, &[1, 2, 3], &[1, 2, 3]),
            (1, &[1, 2, 3], &[0, 1, 2]),
            (3, &[1, 2, 3, 4, 5, 6, 7], &[0, 0, 0, 1, 2, 3, 4]),
        ];
        for (d, xs, want) in cases {
            let mut dl = Delay::new(*d, 0);
            let got: Vec<i32> = xs.iter().map(|&x| dl.push(x)).collect();
            assert_eq!(&got, want, "delay {d}");
        }
    }

    #[test]
    fn expiry_rate_and_power_limits() {
        // (r, p, n, expected rate)
        #[rustfmt::skip]
        let cases: &[(f64, f64, f64, f64)] = &[
            // no marking: one expiry per n units
            (1000.0, 0.0, 100.0, 10.0),
            (1000.0, 1.0, 100.0, 0.0),
            (0.0, 0.01, 100.0, 0.0),
            // p = 0.01, n = 100: (0.99^-100 - 1) = 1.7320..., rate = 1000 * 0.01 / 1.7320
            (1000.0, 0.01, 100.0, 10.0 / (0.99f64.powf(-100.0) - 1.0)),
        ];
        for (r, p, n, want) in cases {
            let got = expiry_rate(*r, *p, *n);
            assert!(
                (got - want).abs() <= 1e-12 * want.max(1.0),
                "r {r} p {p} n {n}: {got} vs {want}"
            );
        }
        // a tiny p tends to the p = 0 limit
        assert!((expiry_rate(1000.0, 1e-12, 100.0) - 10.0).abs() < 1e-6);
        assert_eq!(pow1m(0.0, 5.0), 1.0);
        assert_eq!(pow1m(1.0, 5.0), 0.0);
        assert!((pow1m(0.01, 100.0) - 0.99f64.powi(100)).abs() < 1e-12);
    }
}
