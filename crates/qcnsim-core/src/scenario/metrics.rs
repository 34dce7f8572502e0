//! `[metrics]`: what the run records (sampling intervals, the ports and switches sampled, the
//! kinds of events).

use super::links::port_selection;
use super::reader::{show, Res, TableReader};
use super::{MetricsSpec, NodeKind, Scenario, ScenarioError, EVENT_KINDS};
use crate::units::{self, SimTime};
use serde_json::{json, Value as Json};
use toml::Value;

/// `"switches"` (every switch, the default), `"none"`, or a list of switch names: one flag per
/// node.
fn switch_selection(sc: &Scenario, t: &mut TableReader, key: &'static str) -> Res<Vec<bool>> {
    let is_sw: Vec<bool> = sc
        .nodes
        .iter()
        .map(|n| n.kind == NodeKind::Switch)
        .collect();
    let switches = || {
        sc.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Switch)
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match t.raw(key) {
        None => {
            t.put(key, Json::String("switches".into()));
            Ok(is_sw)
        }
        Some(Value::String(s)) if s == "switches" || s == "none" => {
            t.put(key, Json::String(s.clone()));
            Ok(if s == "none" {
                vec![false; sc.nodes.len()]
            } else {
                is_sw
            })
        }
        Some(Value::Array(_)) => {
            let list = t.opt_str_list(key)?.unwrap_or_default();
            let mut sel = vec![false; sc.nodes.len()];
            for (i, name) in list.iter().enumerate() {
                match sc.nodes.iter().position(|n| &n.name == name) {
                    Some(n) if is_sw[n] => sel[n] = true,
                    _ => {
                        return Err(ScenarioError::new(
                            format!("{}.{i}", t.field(key)),
                            format!("{name:?}"),
                            format!("the name of a switch ({})", switches()),
                        ))
                    }
                }
            }
            Ok(sel)
        }
        Some(v) => Err(t.err(
            key,
            show(v),
            format!(
                "\"switches\", \"none\", or a list of switch names ({})",
                switches()
            ),
        )),
    }
}

pub(super) fn parse_metrics(sc: &Scenario, m: &mut TableReader) -> Res<MetricsSpec> {
    let positive = |m: &TableReader, key: &str, t: SimTime| -> Res<SimTime> {
        if t == 0 {
            Err(m.err(key, "\"0s\"", "an interval above zero"))
        } else {
            Ok(t)
        }
    };
    let throughput_bin = m.time_or("throughput_bin", units::MS)?;
    let throughput_bin = positive(m, "throughput_bin", throughput_bin)?;
    let throughput_ports = port_selection(sc, m, "throughput_ports", "switches")?;
    let queue_interval = m.time_or("queue_interval", units::MS)?;
    let queue_interval = positive(m, "queue_interval", queue_interval)?;
    let queue_ports = port_selection(sc, m, "queue_ports", "switches")?;
    let memory_switches = switch_selection(sc, m, "memory_switches")?;
    let rate_interval = m.time_or("rate_interval", units::MS)?;
    let rate_interval = positive(m, "rate_interval", rate_interval)?;
    let events = m
        .opt_str_list("events")?
        .unwrap_or_else(|| EVENT_KINDS.iter().map(|s| s.to_string()).collect());
    let mut record_mask = 0u32;
    for (i, e) in events.iter().enumerate() {
        match EVENT_KINDS.iter().position(|k| *k == e.as_str()) {
            Some(k) => record_mask |= 1 << k,
            None => {
                return Err(ScenarioError::new(
                    format!("{}.{i}", m.field("events")),
                    format!("{e:?}"),
                    format!("one of: {}", EVENT_KINDS.join(", ")),
                ))
            }
        }
    }
    m.put("events", json!(events));
    let max_event_rows = m.int_in("max_event_rows", 5_000_000, 0, 1_000_000_000)? as usize;
    // [flow_control] is read before [metrics]
    let host_queues = m.bool_or("host_queues", sc.fc.is_on())?;
    Ok(MetricsSpec {
        throughput_bin,
        throughput_ports,
        queue_interval,
        queue_ports,
        memory_switches,
        rate_interval,
        record_cnm_sent: events.iter().any(|e| e == "cnm_sent"),
        record_cnm_received: events.iter().any(|e| e == "cnm_received"),
        record_drops: events.iter().any(|e| e == "drop"),
        record_mask,
        record_switch_drops: events.iter().any(|e| e == "drop" || e == "switch_drop"),
        record_pause: events.iter().any(|e| e == "pause"),
        max_event_rows,
        host_queues,
        widened: Vec::new(),
        max_sample_rows: super::budget::DEFAULT_MAX_SAMPLE_ROWS as u64,
        memory_limit: u64::MAX,
        frames_cap: u64::MAX,
    })
}
