//! `[[schedule]]`: changes of a port's service rate over the run, and link failures and
//! recoveries (docs/models/topology.md, "Link failures").

use super::links::port_ref;
use super::reader::{Res, TableReader};
use super::{flow_control, LinkEvent, Scenario, ScenarioError, ScheduleSpec};
use crate::units;
use serde_json::{Map, Value as Json};

/// `[[schedule]]`: rate changes into `sc.schedule`, link changes into `sc.link_events`.
pub(super) fn read(
    sc: &mut Scenario,
    r: &mut TableReader,
    resolved: &mut Map<String, Json>,
) -> Res<()> {
    let duration = sc.duration;
    let mut sched_json = Vec::new();
    for mut t in r.tables("schedule")? {
        if t.has("link") {
            let ev = read_link_event(sc, &mut t)?;
            sc.link_events.push(ev);
            sched_json.push(Json::Object(t.finish()?));
            continue;
        }
        let port_name = t.req_str("port")?;
        let port = port_ref(sc, &t, "port", &port_name)?;
        let at = t.req_time("at")?;
        if at > duration {
            return Err(t.err(
                "at",
                format!("{:?}", units::fmt_time(at)),
                format!(
                    "a time within the run, at most meta.duration = {}",
                    units::fmt_time(duration)
                ),
            ));
        }
        if let Some(prev) = sc
            .schedule
            .iter()
            .rev()
            .find(|s: &&ScheduleSpec| s.port == port)
        {
            if at < prev.at {
                return Err(t.err(
                    "at",
                    format!("{:?}", units::fmt_time(at)),
                    format!(
                        "a time not before the previous change of port {port_name:?} (at {}): schedule entries of a port are in time order",
                        units::fmt_time(prev.at)
                    ),
                ));
            }
        }
        let rate_bps = t.req_rate("rate")?;
        if rate_bps > sc.links[port / 2].rate_bps {
            return Err(t.err(
                "rate",
                format!("{:?}", units::fmt_rate(rate_bps)),
                format!(
                    "a service rate up to the link rate {}",
                    units::fmt_rate(sc.links[port / 2].rate_bps)
                ),
            ));
        }
        sc.schedule.push(ScheduleSpec { at, port, rate_bps });
        sched_json.push(Json::Object(t.finish()?));
    }
    resolved.insert("schedule".into(), Json::Array(sched_json));
    Ok(())
}

/// A `[[schedule]]` entry with `link = "A-B"` (or `"A-B#k"`, the k-th parallel link between A
/// and B, k >= 1, as the topology generators name them) and `state = "down" | "up"`.
fn read_link_event(sc: &Scenario, t: &mut TableReader) -> Res<LinkEvent> {
    let name = t.req_str("link")?;
    let (pair, k) = match name.rsplit_once('#') {
        Some((p, k)) => match k.parse::<usize>() {
            Ok(k) if k >= 1 => (p, k),
            _ => (name.as_str(), usize::MAX),
        },
        None => (name.as_str(), 0),
    };
    // every split at a '-' whose two sides are node names
    let link = pair
        .match_indices('-')
        .filter_map(|(i, _)| {
            let (a, b) = (
                sc.node_index.get(&pair[..i])?,
                sc.node_index.get(&pair[i + 1..])?,
            );
            sc.links
                .iter()
                .enumerate()
                .filter(|(_, l)| (l.a == *a && l.b == *b) || (l.a == *b && l.b == *a))
                .nth(k)
                .map(|(li, _)| li)
        })
        .next()
        .ok_or_else(|| {
            t.err(
                "link",
                format!("{name:?}"),
                "a link named by its two nodes, \"A-B\" (\"A-B#k\": the k-th parallel link)",
            )
        })?;
    // a change after the end of the run never happens (so a shortened run, e.g. `reproduce
    // --quick`, keeps its scenario's failures)
    let at = t.req_time("at")?;
    let up = match t.req_str("state")?.as_str() {
        "down" => false,
        "up" => true,
        s => return Err(t.err("state", format!("{s:?}"), "\"down\" or \"up\"")),
    };
    let prev = sc.link_events.iter().rev().find(|e| e.link == link);
    if let Some(p) = prev.filter(|p| at < p.at) {
        return Err(t.err(
            "at",
            format!("{:?}", units::fmt_time(at)),
            format!(
                "a time not before the link's previous change (at {}): a link's entries are in time order",
                units::fmt_time(p.at)
            ),
        ));
    }
    if prev.is_none_or(|p| p.up) == up {
        return Err(t.err(
            "state",
            format!("{:?}", if up { "up" } else { "down" }),
            format!(
                "the other state: the link is already {} then",
                if up { "up" } else { "down" }
            ),
        ));
    }
    Ok(LinkEvent { at, link, up })
}

/// Link failures route every unicast data frame hop by hop on the routes of the moment
/// (docs/models/topology.md, "Link failures"): refuse what needs a fixed path.
pub(super) fn check_link_events(sc: &Scenario) -> Res<()> {
    let with = "with link failures in [[schedule]] (frames are routed hop by hop on the routes of the moment, not on a fixed path)";
    if sc.fc.mode != flow_control::FcMode::None {
        return Err(ScenarioError::new(
            "flow_control.mode",
            format!("{:?}", sc.fc.mode),
            format!("\"none\" {with}: PAUSE/PFC account frames by the port they arrived on, known from a fixed path"),
        ));
    }
    if sc.buffer.is_on() {
        return Err(ScenarioError::new(
            "shared_buffer",
            "given",
            format!(
                "no shared buffer {with}: its memory charges frames to the port they arrived on"
            ),
        ));
    }
    if sc.feedback_reverse {
        return Err(ScenarioError::new(
            "cc.feedback_route",
            "\"reverse\"",
            format!("\"shortest\" {with}"),
        ));
    }
    if !sc.groups.is_empty() {
        return Err(ScenarioError::new(
            "groups",
            format!("{} groups", sc.groups.len()),
            format!("no multicast groups {with} (their trees are fixed)"),
        ));
    }
    if let Some(f) = sc.flows.iter().find(|f| f.explicit_path) {
        return Err(ScenarioError::new(
            format!(
                "flows.{}.path",
                sc.flows.iter().position(|g| g.name == f.name).unwrap_or(0)
            ),
            "given",
            format!("no explicit path {with}: use routing.mode"),
        ));
    }
    if sc.n_ports() >= u16::MAX as usize {
        return Err(ScenarioError::new(
            "links",
            format!("{} links", sc.links.len()),
            format!("fewer than {} links {with}", u16::MAX / 2),
        ));
    }
    Ok(())
}
