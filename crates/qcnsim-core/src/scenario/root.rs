//! The root of a scenario file: its sections read in their order (a bad value is reported by
//! the first reader that meets it, so the order decides which error a user sees first), each by
//! the file of the section: links.rs (`[defaults]`, nodes, links), schedule.rs, multicast.rs
//! (`[[groups]]`), flows.rs, transport.rs, cc.rs (with qcn.rs, bcn.rs, dcqcn.rs),
//! flow_control.rs and buffer.rs, metrics.rs and budget.rs, analysis.rs, fluid.rs, variants.rs
//! and sweep.rs.

use super::flow_control::{self, FlowControlSpec};
use super::reader::{show, Res, TableReader};
use super::{
    analysis, budget, buffer, cc, dcqcn, expand, flows, fluid, links, metrics, multicast, params,
    qcn, schedule, sweep, topology, transport, variants, workload,
};
use super::{
    AnalysisSpec, BcnSpec, CcMode, LinkSpec, MetricsSpec, NodeSpec, QcnSpec, Routes, RoutingMode,
    RoutingSpec, Scenario, ScenarioError, TransientSpec,
};
use crate::proto::bcn::{BcnCpParams, BcnRpParams};
use crate::proto::multicast::McFeedback;
use crate::proto::nic_fb::{Feedback, NicFbParams};
use crate::proto::qcn_cp::CpParams;
use crate::proto::qcn_rp::RpParams;
use crate::units::{self, SimTime};
use serde_json::{Map, Value as Json};
use std::borrow::Cow;
use toml::Value;

/// A scenario document (after `load` has applied a variant's `set` and the overrides) read
/// into the scenario model.
pub(super) fn parse_root(root: &toml::Table, seed_over: Option<u64>) -> Res<Scenario> {
    let (root, topo_json, work_json) = generate(root, seed_over)?;
    // the network's entries are read (and dropped) one by one, outside the document
    let mut root = root.into_owned();
    let net = [
        TableReader::take_tables(&mut root, "hosts"),
        TableReader::take_tables(&mut root, "switches"),
        TableReader::take_tables(&mut root, "links"),
    ];
    let mut r = TableReader::new("", &root);
    let mut resolved = Map::new();
    if let Some(j) = topo_json {
        resolved.insert("topology".into(), j);
    }
    if let Some(j) = work_json {
        resolved.insert("workloads".into(), j);
    }

    let meta = read_meta(&mut r, seed_over, &mut resolved)?;
    let def = links::read_defaults(&mut r, &mut resolved)?;
    let [hosts, switches, links] = net;
    let (nodes, index) = links::read_nodes([hosts?, switches?], &def, &mut resolved)?;
    let links = links::read_links(links?, &def, &nodes, &index, &mut resolved)?;
    // the routing tables are the first thing sized by the network: refused when they alone
    // exceed the memory budget (clamped to the machine)
    let (limit, budget) = super::routes::document_limit(&root);
    let routes = super::routes::build(&nodes, &links, limit, budget)?;
    let mut sc = skeleton(
        meta.name,
        meta.duration,
        meta.seed,
        nodes,
        links,
        index,
        routes,
    );
    sc.drain_until = meta.drain_until;
    sc.nic_round_robin = def.nic_rr;

    schedule::read(&mut sc, &mut r, &mut resolved)?;

    // [[groups]]
    let (groups, group_json) = multicast::parse_groups(&sc, &mut r)?;
    sc.groups = groups;
    if !group_json.is_empty() {
        resolved.insert("groups".into(), Json::Array(group_json));
    }

    read_routing(&mut sc, &mut r, &mut resolved)?;
    flows::read(&mut sc, &mut r, &mut resolved)?;
    read_transport(&mut sc, &mut r, &mut resolved)?;
    cc::read(&mut sc, &mut r, &mut resolved)?;
    flows::check_waiting(&sc)?;
    read_buffers(&mut sc, &mut r, &mut resolved)?;
    check_fc_intervals(&sc)?;
    check_spray(&sc)?;
    if !sc.link_events.is_empty() {
        schedule::check_link_events(&sc)?;
    }
    if sc.cc == CcMode::Qcn {
        qcn::check_qeq(&sc)?;
    }

    // [metrics]
    let mut m = r.sub("metrics")?;
    sc.metrics = metrics::parse_metrics(&sc, &mut m)?;
    budget::apply(&mut sc, &mut m, meta.max_frames)?;
    resolved.insert("metrics".into(), Json::Object(m.finish()?));

    analysis::read(&mut sc, &mut r, &mut resolved)?;
    read_fluid(&mut sc, &mut r, &mut resolved)?;
    variants::record(&mut r, &mut resolved)?;

    // [sweep]: its shape only (see sweep.rs); a single run ignores it.
    if let Some(sw) = sweep::read(&mut r)? {
        resolved.insert("sweep".into(), sw);
    }

    r.finish()?;
    sc.resolved = Json::Object(resolved);
    Ok(sc)
}

/// The document the sections are read from: with its expansions applied (expand.rs), its
/// generated topology (topology.rs) and its generated workloads (workload.rs), in that order;
/// and the resolved `topology` and `workloads`, when generated.
fn generate(
    root: &toml::Table,
    seed_over: Option<u64>,
) -> Res<(Cow<'_, toml::Table>, Option<Json>, Option<Json>)> {
    let root = if expand::needed(root) {
        Cow::Owned(expand::expand(root)?)
    } else {
        Cow::Borrowed(root)
    };
    let mut topo_json = None;
    let root = match topology::generate(&root)? {
        Some((t, j)) => {
            topo_json = Some(j);
            Cow::Owned(t)
        }
        None => root,
    };
    // workloads need the run's seed and length before [meta] is read (a bad [meta] is
    // reported by its reader below)
    let meta_seed = root
        .get("meta")
        .and_then(|m| m.get("seed"))
        .and_then(|s| {
            s.as_integer()
                .map(|i| i as u64)
                .or_else(|| s.as_str().and_then(|t| t.trim().parse().ok()))
        })
        .unwrap_or(1);
    let meta_duration = root
        .get("meta")
        .and_then(|m| m.get("duration"))
        .and_then(|d| d.as_str())
        .and_then(|d| units::parse_time(d).ok())
        .unwrap_or(units::SEC);
    let mut work_json = None;
    let mut root = root;
    if let Some((flows, j)) = workload::generate(
        &root,
        seed_over.unwrap_or(meta_seed),
        meta_duration,
        topo_json.as_ref(),
    )? {
        work_json = Some(j);
        let doc = root.to_mut();
        doc.remove("workloads");
        doc.insert("flows".into(), Value::Array(flows));
    }
    Ok((root, topo_json, work_json))
}

/// What `[meta]` gives the other sections.
struct Meta {
    name: String,
    duration: SimTime,
    seed: u64,
    max_frames: i64,
    drain_until: Option<SimTime>,
}

/// `[meta]`.
fn read_meta(
    r: &mut TableReader,
    seed_over: Option<u64>,
    resolved: &mut Map<String, Json>,
) -> Res<Meta> {
    let mut meta = r.sub("meta")?;
    let name = meta.str_or("name", "unnamed")?;
    meta.str_or("description", "")?;
    let duration = meta.req_time("duration")?;
    if duration == 0 {
        return Err(meta.err("duration", "\"0s\"", "a duration above zero"));
    }
    let quick = meta.opt_time("quick_duration")?;
    if quick == Some(0) {
        return Err(meta.err(
            "quick_duration",
            "\"0s\"",
            "a duration above zero (reproduce --quick runs min(quick_duration, duration))",
        ));
    }
    // drain mode: arrivals end at `duration`, the run goes on until every finite flow has
    // finished, at the latest until `drain_until`
    let drain_until = match meta.raw("drain_until") {
        Some(Value::String(s)) if s == "off" => {
            meta.put("drain_until", Json::String("off".into()));
            None
        }
        _ => meta.opt_time("drain_until")?,
    };
    if let Some(d) = drain_until.filter(|&d| d <= duration) {
        return Err(meta.err(
            "drain_until",
            format!("{:?}", units::fmt_time(d)),
            format!(
                "a time after meta.duration = {} (the latest end of a run that goes on until \
                 every finite flow has finished; leave it out for a run that ends at duration)",
                units::fmt_time(duration)
            ),
        ));
    }
    let seed = read_seed(&mut meta)?;
    let seed = seed_over.unwrap_or(seed);
    let max_frames = meta.int_in("max_frames", budget::DEFAULT_MAX_FRAMES, 1, i64::MAX)?;
    meta.opt_str("variant")?; // checked and applied by `load`
    resolved.insert("meta".into(), Json::Object(meta.finish()?));
    Ok(Meta {
        name,
        duration,
        seed,
        max_frames,
        drain_until,
    })
}

/// `meta.seed`: a whole number from 0 to 2^64-1, the range of `qcnsim run --seed` and of the
/// seeds a sweep derives. A TOML integer is signed 64-bit, so a seed above 2^63-1 is written as a
/// string of digits (`seed = "18446744073709551615"`); the resolved scenario holds the number.
fn read_seed(meta: &mut TableReader) -> Res<u64> {
    const ALLOWED: &str = "a whole number from 0 to 18446744073709551615 (2^64-1; above 2^63-1 \
                           write it as a string of digits, e.g. \"18446744073709551615\")";
    let seed = match meta.raw("seed") {
        None => 1,
        Some(Value::Integer(i)) => {
            u64::try_from(*i).map_err(|_| meta.err("seed", i.to_string(), ALLOWED))?
        }
        Some(Value::String(s)) => {
            let digits = s.trim();
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(meta.err("seed", format!("{s:?}"), ALLOWED));
            }
            digits
                .parse::<u64>()
                .map_err(|_| meta.err("seed", format!("{s:?}"), ALLOWED))?
        }
        Some(v) => return Err(meta.err("seed", show(v), ALLOWED)),
    };
    meta.put("seed", Json::from(seed));
    Ok(seed)
}

/// The scenario of the network alone: every section read after the links at its value before
/// reading.
fn skeleton(
    name: String,
    duration: SimTime,
    seed: u64,
    nodes: Vec<NodeSpec>,
    links: Vec<LinkSpec>,
    index: super::fasthash::NameIndex,
    routes: Routes,
) -> Scenario {
    Scenario {
        name,
        duration,
        drain_until: None,
        seed,
        nodes,
        links,
        schedule: Vec::new(),
        link_events: Vec::new(),
        flows: Vec::new(),
        groups: Vec::new(),
        cc: CcMode::None,
        feedback_latency: 0,
        rl_start_full: true,
        nic_round_robin: true,
        feedback_reverse: false,
        qcn: QcnSpec {
            cp: CpParams::standard(),
            rp: RpParams::standard(10e9),
            cnm_bytes: 64,
            rl_queue_bytes: 0,
            rl_burst_bytes: None,
            cp_ports: Vec::new(),
            multicast_feedback: McFeedback::Standard,
            multicast_fbhat_hold_ps: 0,
            transient: TransientSpec::default(),
            feedback: Feedback::Switch,
            nic: NicFbParams::standard(),
        },
        bcn: BcnSpec {
            cp: BcnCpParams::study(),
            rp: BcnRpParams::study(10e9),
            msg_bytes: 64,
            rl_queue_bytes: 0,
            rl_burst_bytes: None,
            cp_ports: Vec::new(),
        },
        dcqcn: dcqcn::DcqcnSpec::off(),
        timely: super::timely::TimelySpec::default(),
        swift: super::swift::SwiftSpec::default(),
        dctcp: super::dctcp::DctcpSpec::off(),
        hpcc: super::hpcc::HpccSpec::off(),
        transport: transport::TransportSpec::unset(),
        fc: FlowControlSpec::off(),
        buffer: buffer::SharedBufferSpec::off(),
        metrics: MetricsSpec {
            throughput_bin: 0,
            throughput_ports: Vec::new(),
            queue_interval: 0,
            queue_ports: Vec::new(),
            memory_switches: Vec::new(),
            rate_interval: 0,
            record_cnm_sent: false,
            record_cnm_received: false,
            record_drops: false,
            record_mask: 0,
            record_switch_drops: false,
            record_pause: false,
            max_event_rows: 0,
            host_queues: false,
            widened: Vec::new(),
            max_sample_rows: budget::DEFAULT_MAX_SAMPLE_ROWS as u64,
            memory_limit: u64::MAX,
            frames_cap: u64::MAX,
        },
        analysis: AnalysisSpec {
            bottleneck: None,
            recovery_fraction: 0.9,
            stats_from: 0,
            stats_to: duration,
            downward_factor: None,
            victims: false,
            fct_unfinished_bound: false,
        },
        routes,
        routing: RoutingSpec {
            mode: RoutingMode::Shortest,
            same_seed: false,
        },
        node_index: index,
        fluid: fluid::FluidSpec::default(),
        resolved: Json::Null,
    }
}

/// `[routing]`.
fn read_routing(
    sc: &mut Scenario,
    r: &mut TableReader,
    resolved: &mut Map<String, Json>,
) -> Res<()> {
    let mut rt = r.sub("routing")?;
    sc.routing = RoutingSpec {
        mode: match params::read_choice(&mut rt, params::spec("routing", "mode"))?.as_str() {
            "ecmp" => RoutingMode::Ecmp,
            "spray" => RoutingMode::Spray,
            _ => RoutingMode::Shortest,
        },
        same_seed: params::read_choice(&mut rt, params::spec("routing", "hash_seed"))? == "same",
    };
    resolved.insert("routing".into(), Json::Object(rt.finish()?));
    Ok(())
}

/// `[transport]` (in the resolved scenario when given or used).
fn read_transport(
    sc: &mut Scenario,
    r: &mut TableReader,
    resolved: &mut Map<String, Json>,
) -> Res<()> {
    let tp_given = r.has("transport");
    let mut tpr = r.sub("transport")?;
    sc.transport = transport::parse(&mut tpr)?;
    let tpj = tpr.finish()?;
    if tp_given
        || sc
            .flows
            .iter()
            .any(|f| f.transport == transport::Transport::Gbn)
    {
        resolved.insert("transport".into(), Json::Object(tpj));
    }
    Ok(())
}

/// `[flow_control]`, then `[shared_buffer]` (in the resolved scenario only when given), then
/// the checks that need both and the buffer sizes.
fn read_buffers(
    sc: &mut Scenario,
    r: &mut TableReader,
    resolved: &mut Map<String, Json>,
) -> Res<()> {
    let mut fcr = r.sub("flow_control")?;
    sc.fc = flow_control::parse(sc, &mut fcr)?;
    resolved.insert("flow_control".into(), Json::Object(fcr.finish()?));

    // [shared_buffer] (in the resolved scenario only when given)
    let sb_given = r.has("shared_buffer");
    let mut sbr = r.sub("shared_buffer")?;
    sc.buffer = buffer::parse(sc, &mut sbr)?;
    let sbj = sbr.finish()?;
    if sb_given {
        resolved.insert("shared_buffer".into(), Json::Object(sbj));
    }
    if sc.fc.is_on() && sc.fc.watermark == flow_control::WatermarkMode::Global {
        sc.buffer = buffer::global_watermark(sc, sb_given)?;
    }
    buffer::check(sc)?;
    // buffer sizes are known now
    flow_control::check(sc)?;
    Ok(())
}

/// `routing.mode = "spray"` (some flow sprayed) needs no fixed path elsewhere.
fn check_spray(sc: &Scenario) -> Res<()> {
    if sc.flows.iter().any(|f| f.spray) {
        if sc.fc.mode != flow_control::FcMode::None {
            return Err(ScenarioError::new(
                "routing.mode",
                "\"spray\"",
                "\"shortest\" or \"ecmp\" while flow_control.mode is set (PAUSE/PFC account frames by the port they arrived on, known from a fixed path)",
            ));
        }
        if sc.buffer.is_on() {
            return Err(ScenarioError::new(
                "routing.mode",
                "\"spray\"",
                "\"shortest\" or \"ecmp\" with a shared_buffer (its memory charges frames to the port they arrived on, known from a fixed path)",
            ));
        }
        if sc.feedback_reverse {
            return Err(ScenarioError::new(
                "routing.mode",
                "\"spray\"",
                "\"shortest\" or \"ecmp\" with cc.feedback_route = \"reverse\" (a sprayed flow has no single path to reverse)",
            ));
        }
    }
    Ok(())
}

/// `[fluid]`: read and checked always; in the resolved scenario only when given.
/// The shortest deadlock-detection and watchdog interval: one minimum frame (64 bytes) at the
/// rate of the fastest link, rounded up to a whole picosecond (docs/models/pause.md). Shorter,
/// nothing can happen between two checks (every tenth of it) and the checks alone make a run
/// last minutes.
pub(super) fn min_fc_interval(sc: &Scenario) -> SimTime {
    let fastest = sc.links.iter().map(|l| l.rate_bps).fold(0.0, f64::max);
    if fastest <= 0.0 {
        return 1;
    }
    ((64.0 * 8.0 / fastest * units::SEC as f64).ceil() as SimTime).max(1)
}

/// `flow_control.deadlock_detection` and `flow_control.watchdog` at least [`min_fc_interval`].
fn check_fc_intervals(sc: &Scenario) -> Res<()> {
    let min = min_fc_interval(sc);
    for (key, v) in [
        ("deadlock_detection", sc.fc.deadlock_detect),
        ("watchdog", sc.fc.watchdog),
    ] {
        if let Some(t) = v.filter(|&t| t < min) {
            return Err(ScenarioError::new(
                format!("flow_control.{key}"),
                format!("\"{}\"", units::fmt_time(t)),
                format!(
                    "\"off\" or an interval of at least {} (one 64-byte frame at the fastest \
                     link's rate, {})",
                    units::fmt_time(min),
                    units::fmt_rate(sc.links.iter().map(|l| l.rate_bps).fold(0.0, f64::max))
                ),
            ));
        }
    }
    Ok(())
}

fn read_fluid(sc: &mut Scenario, r: &mut TableReader, resolved: &mut Map<String, Json>) -> Res<()> {
    let fluid_given = r.has("fluid");
    let mut fr = r.sub("fluid")?;
    sc.fluid = fluid::read(&mut fr)?;
    // the solver's tables within metrics.max_sample_rows, as the recorder's
    if let Some((_, used)) = fluid::bound_rows(sc) {
        fr.put("record_interval", Json::String(units::fmt_time(used)));
    }
    let fj = fr.finish()?;
    if fluid_given {
        // a scenario without [fluid] is checked when it is solved (api::run_fluid)
        fluid::check_dt(sc)?;
        resolved.insert("fluid".into(), Json::Object(fj));
    }
    Ok(())
}
