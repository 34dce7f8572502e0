//! Multicast groups in scenario files (`[[groups]]`) and the distribution tree of each flow
//! addressed to a group. See docs/models/multicast.md.
//!
//! A group has a name, a MAC group address and its member hosts. Its distribution tree is either
//! computed per source (the shortest-path tree from the source: breadth-first over switches,
//! ties to the link listed first, pruned to the members), or given as `tree`, the static
//! forwarding entries of the group: the switch egress ports a frame of the group is copied onto.
//! A switch forwards a group frame onto each of its entries except the port back to where the
//! frame came from (the 802.1Q rule that a frame never leaves by its reception port).

use super::links::{names, port_ref};
use super::reader::{Res, TableReader};
use super::{NodeKind, PortIx, Scenario};
use crate::scenario::ScenarioError;
use serde_json::Value as Json;
use std::collections::VecDeque;

const NO_PARENT: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct GroupSpec {
    pub name: String,
    /// MAC group address, `01:00:5e:..` style (the I/G bit set).
    pub mac: String,
    /// Member hosts (node indices).
    pub members: Vec<usize>,
    /// Static forwarding entries (switch egress ports); `None` = shortest-path tree per source.
    pub tree: Option<Vec<bool>>,
}

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    if parts.len() != 6 {
        return None;
    }
    let mut out = [0u8; 6];
    for (i, p) in parts.iter().enumerate() {
        if p.len() != 2 {
            return None;
        }
        out[i] = u8::from_str_radix(p, 16).ok()?;
    }
    Some(out)
}

/// Read `[[groups]]`.
pub fn parse_groups(sc: &Scenario, r: &mut TableReader) -> Res<(Vec<GroupSpec>, Vec<Json>)> {
    let mut groups: Vec<GroupSpec> = Vec::new();
    let mut json = Vec::new();
    for (gi, mut t) in r.tables("groups")?.into_iter().enumerate() {
        let name = t.req_str("name")?;
        if name.is_empty() || groups.iter().any(|g| g.name == name) {
            return Err(t.err(
                "name",
                format!("{name:?}"),
                "a non-empty name not used by another group",
            ));
        }
        let mac = match t.opt_str("mac")? {
            None => {
                let n = gi as u32 + 1;
                let m = format!(
                    "01:00:5e:{:02x}:{:02x}:{:02x}",
                    (n >> 16) & 0x7f,
                    (n >> 8) & 0xff,
                    n & 0xff
                );
                t.put("mac", Json::String(m.clone()));
                m
            }
            Some(m) => {
                let ok = parse_mac(&m).is_some_and(|b| b[0] & 1 == 1);
                if !ok {
                    return Err(t.err(
                        "mac",
                        format!("{m:?}"),
                        "a MAC group address: six hex octets such as \"01:00:5e:00:00:01\", \
                         the first octet odd (the I/G bit set)",
                    ));
                }
                m.to_ascii_lowercase().replace('-', ":")
            }
        };
        if let Some(other) = groups.iter().find(|g| g.mac == mac) {
            return Err(t.err(
                "mac",
                format!("{mac:?}"),
                format!(
                    "an address not used by another group (group {:?} has it)",
                    other.name
                ),
            ));
        }
        let list = t.opt_str_list("members")?.unwrap_or_default();
        if list.is_empty() {
            return Err(t.err(
                "members",
                if t.has("members") { "[]" } else { "missing" },
                "a list of at least one member host, e.g. members = [\"r1\", \"r2\"]",
            ));
        }
        let mut members = Vec::new();
        for (k, m) in list.iter().enumerate() {
            let path = format!("{}.{k}", t.field("members"));
            let Some(ix) = sc.nodes.iter().position(|n| &n.name == m) else {
                return Err(ScenarioError::new(
                    path,
                    format!("{m:?}"),
                    format!("the name of a host ({})", names(&sc.nodes)),
                ));
            };
            if sc.nodes[ix].kind != NodeKind::Host {
                return Err(ScenarioError::new(
                    path,
                    format!("{m:?}"),
                    "a host (a switch cannot be a group member)",
                ));
            }
            if members.contains(&ix) {
                return Err(ScenarioError::new(
                    path,
                    format!("{m:?}"),
                    "a member listed once",
                ));
            }
            members.push(ix);
        }
        let tree = match t.opt_str_list("tree")? {
            None => None,
            Some(ports) => {
                let mut sel = vec![false; sc.n_ports()];
                for (k, pname) in ports.iter().enumerate() {
                    let path = format!("{}.{k}", t.field("tree"));
                    let p = port_ref(sc, &t, "tree", pname).map_err(|mut e| {
                        e.path = path.clone();
                        e
                    })?;
                    let (from, to) = sc.port_ends(p);
                    if sc.nodes[from].kind != NodeKind::Switch {
                        return Err(ScenarioError::new(
                            path,
                            format!("{pname:?}"),
                            "a switch egress port (the source's own link is implied)",
                        ));
                    }
                    if sc.nodes[to].kind == NodeKind::Host && !members.contains(&to) {
                        return Err(ScenarioError::new(
                            path,
                            format!("{pname:?}"),
                            format!(
                                "a port towards a switch or a member of group {name:?} \
                                 ({:?} is not a member)",
                                sc.nodes[to].name
                            ),
                        ));
                    }
                    sel[p] = true;
                }
                Some(sel)
            }
        };
        groups.push(GroupSpec {
            name,
            mac,
            members,
            tree,
        });
        json.push(Json::Object(t.finish()?));
    }
    Ok((groups, json))
}

/// `flows.N.group`: the group a flow is addressed to, if any. A flow has either `dst` or
/// `group`.
pub fn flow_group(sc: &Scenario, t: &mut TableReader) -> Res<Option<usize>> {
    let Some(g) = t.opt_str("group")? else {
        return Ok(None);
    };
    let Some(gi) = sc.groups.iter().position(|x| x.name == g) else {
        let known: Vec<&str> = sc.groups.iter().map(|x| x.name.as_str()).collect();
        return Err(t.err(
            "group",
            format!("{g:?}"),
            if known.is_empty() {
                "the name of a [[groups]] entry (this scenario defines no groups)".to_string()
            } else {
                format!("the name of a [[groups]] entry ({})", known.join(", "))
            },
        ));
    };
    if t.has("dst") {
        return Err(t.err(
            "dst",
            "given together with group",
            "either dst (a unicast flow) or group (a multicast flow), not both",
        ));
    }
    if t.has("path") {
        return Err(t.err(
            "path",
            "given for a multicast flow",
            "no path: a multicast flow follows its group's tree (groups.N.tree)",
        ));
    }
    Ok(Some(gi))
}

/// The distribution tree of a flow from host `src` to group `gi`: tree nodes in breadth-first
/// order, each an egress port (node 0 is the source's NIC port) with the index of its parent
/// node (`u32::MAX` for node 0). Errors name `flows.N.group` (computed trees) or
/// `groups.M.tree` (explicit trees).
pub fn flow_tree(
    sc: &Scenario,
    t: &TableReader,
    gi: usize,
    src: usize,
) -> Res<(Vec<PortIx>, Vec<u32>)> {
    let g = &sc.groups[gi];
    let members: Vec<usize> = g.members.iter().copied().filter(|&m| m != src).collect();
    if members.is_empty() {
        return Err(t.err(
            "group",
            format!("{:?}", g.name),
            format!(
                "a group with a member other than the source {:?}",
                sc.nodes[src].name
            ),
        ));
    }
    let Some(nic) = (0..sc.n_ports()).find(|&p| sc.port_ends(p).0 == src) else {
        return Err(t.err(
            "src",
            format!("{:?}", sc.nodes[src].name),
            "a host with a link",
        ));
    };
    let entries: Vec<bool> = match &g.tree {
        Some(sel) => sel.clone(),
        None => shortest_path_entries(sc, t, g, src, nic, &members)?,
    };
    let tree_path = format!("groups.{gi}.tree");
    // Walk the entries from the source; every node may be reached once.
    let mut ports = vec![nic];
    let mut parent = vec![NO_PARENT];
    let mut seen = vec![false; sc.nodes.len()];
    seen[src] = true;
    let mut queue = VecDeque::from([0usize]);
    while let Some(k) = queue.pop_front() {
        let p = ports[k];
        let (from, at) = sc.port_ends(p);
        if seen[at] {
            return Err(ScenarioError::new(
                tree_path,
                format!("{:?}", sc.port_name(p)),
                format!(
                    "a loop-free tree: from source {:?} node {:?} is reached twice",
                    sc.nodes[src].name, sc.nodes[at].name
                ),
            ));
        }
        seen[at] = true;
        if sc.nodes[at].kind == NodeKind::Host {
            continue;
        }
        let mut any = false;
        for (q, &entry) in entries.iter().enumerate() {
            let (a, b) = sc.port_ends(q);
            if entry && a == at && b != from {
                any = true;
                ports.push(q);
                parent.push(k as u32);
                queue.push_back(ports.len() - 1);
            }
        }
        if !any {
            return Err(ScenarioError::new(
                tree_path,
                format!("{:?}", sc.port_name(p)),
                format!(
                    "a tree without dead ends: from source {:?} frames reach switch {:?}, \
                     which has no further tree port",
                    sc.nodes[src].name, sc.nodes[at].name
                ),
            ));
        }
    }
    if let Some(&m) = members.iter().find(|&&m| !seen[m]) {
        return Err(ScenarioError::new(
            tree_path,
            "these ports",
            format!(
                "a tree reaching every member of group {:?} from source {:?}: member {:?} is \
                 not reached",
                g.name, sc.nodes[src].name, sc.nodes[m].name
            ),
        ));
    }
    Ok((ports, parent))
}

/// The forwarding entries of the shortest-path tree from `src` to the members: breadth-first
/// from the source over switches (hosts do not forward; ties go to the port listed first),
/// keeping the ports on the way to a member.
fn shortest_path_entries(
    sc: &Scenario,
    t: &TableReader,
    g: &super::multicast::GroupSpec,
    src: usize,
    nic: PortIx,
    members: &[usize],
) -> Res<Vec<bool>> {
    let n = sc.nodes.len();
    let mut via = vec![usize::MAX; n]; // port by which a node is first reached
    let mut reached = vec![false; n];
    reached[src] = true;
    let first = sc.port_ends(nic).1;
    reached[first] = true;
    via[first] = nic;
    let mut queue = VecDeque::from([first]);
    while let Some(v) = queue.pop_front() {
        if sc.nodes[v].kind == NodeKind::Host {
            continue;
        }
        for q in 0..sc.n_ports() {
            let (a, b) = sc.port_ends(q);
            if a == v && !reached[b] {
                reached[b] = true;
                via[b] = q;
                queue.push_back(b);
            }
        }
    }
    let mut entries = vec![false; sc.n_ports()];
    for &m in members {
        if !reached[m] {
            return Err(t.err(
                "group",
                format!("{:?}", g.name),
                format!(
                    "a group whose members are all reachable from the source {:?}: member {:?} \
                     is not",
                    sc.nodes[src].name, sc.nodes[m].name
                ),
            ));
        }
        let mut at = m;
        while at != src && via[at] != nic {
            let p = via[at];
            if entries[p] {
                break;
            }
            entries[p] = true;
            at = sc.port_ends(p).0;
        }
    }
    Ok(entries)
}
