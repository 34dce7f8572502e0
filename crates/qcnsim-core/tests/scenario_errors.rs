//! Malformed scenarios are rejected with the dotted path of the offending field, and the
//! message shows the value as written. Table-driven: (description, edit, expected path,
//! text the Display must contain).

use qcnsim_core::scenario;

const BASE: &str = r#"
[meta]
name = "base"
duration = "10ms"
seed = 1

[defaults]
link_rate = "10Gbps"
buffer = "150KB"

[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"

[[links]]
between = ["a", "sw"]
[[links]]
between = ["sw", "b"]

[[schedule]]
at = "2ms"
port = "sw->b"
rate = "1Gbps"
[[schedule]]
at = "6ms"
port = "sw->b"
rate = "10Gbps"

[[flows]]
name = "f0"
src = "a"
dst = "b"
rate = "5Gbps"

[cc]
mode = "qcn"
[cc.qcn.cp]
q_eq = "26KB"
"#;

enum Edit {
    /// `--set` overrides
    Set(&'static [&'static str]),
    /// replace the first occurrence of .0 by .1 in the base text
    Replace(&'static str, &'static str),
    /// append TOML text
    Append(&'static str),
    /// a whole scenario text
    Whole(&'static str),
}

struct Case {
    what: &'static str,
    edit: Edit,
    path: &'static str,
    shows: &'static str,
}

use Edit::*;

fn cases() -> Vec<Case> {
    vec![
        Case { what: "unknown top-level key", edit: Replace("[meta]", "bogus = 1\n[meta]"), path: "bogus", shows: "unknown key" },
        Case { what: "unknown key in meta", edit: Set(&["meta.durration=5ms"]), path: "meta.durration", shows: "unknown key" },
        Case { what: "unknown key in a flow", edit: Set(&["flows.0.ratee=1Gbps"]), path: "flows.0.ratee", shows: "unknown key" },
        Case { what: "unknown key four levels deep", edit: Set(&["cc.qcn.cp.qeq=26KB"]), path: "cc.qcn.cp.qeq", shows: "unknown key" },
        Case { what: "a typo gets the nearest valid name", edit: Set(&["cc.qcn.cp.qeq=26KB"]), path: "cc.qcn.cp.qeq", shows: "did you mean `cc.qcn.cp.q_eq`?" },
        Case { what: "a swapped pair of letters gets the nearest name", edit: Set(&["meta.duratoin=5ms"]), path: "meta.duratoin", shows: "did you mean `meta.duration`?" },
        Case { what: "a wildcard on a table", edit: Set(&["cc.*.cp=1"]), path: "cc.*", shows: "every element of an array" },
        Case { what: "a wildcard override with a bad value", edit: Set(&["flows.*.rate=-1Gbps"]), path: "flows.0.rate", shows: "-1Gbps" },
        Case { what: "a wildcard over a missing key of the elements", edit: Set(&["links.*.dealy=1us"]), path: "links.0.dealy", shows: "did you mean `links.0.delay`?" },
        Case { what: "an index that is neither a number, nor * nor a name", edit: Set(&["flows.first.rate=1Gbps"]), path: "flows.first", shows: "* for every element, or an element's name (f0)" },
        Case { what: "rate with a size unit", edit: Set(&["flows.0.rate=10GB"]), path: "flows.0.rate", shows: "10GB" },
        Case { what: "time without a unit", edit: Set(&["meta.duration=\"10\""]), path: "meta.duration", shows: "\"10\"" },
        Case { what: "zero link rate", edit: Replace("between = [\"a\", \"sw\"]", "between = [\"a\", \"sw\"]\nrate = \"0Gbps\""), path: "links.0.rate", shows: "0Gbps" },
        Case { what: "negative flow rate", edit: Set(&["flows.0.rate=-1Gbps"]), path: "flows.0.rate", shows: "-1Gbps" },
        Case { what: "Qeq above the CP buffer", edit: Set(&["cc.qcn.cp.q_eq=200KB"]), path: "cc.qcn.cp.q_eq", shows: "200000B" },
        Case { what: "Qeq above a buffer given in frames", edit: Set(&["defaults.buffer=10frames"]), path: "cc.qcn.cp.q_eq", shows: "26000B" },
        Case { what: "flow to an unreachable host (two islands)", edit: Append("[[hosts]]\nname = \"c\"\n[[hosts]]\nname = \"d\"\n[[switches]]\nname = \"sw2\"\n[[links]]\nbetween = [\"c\", \"sw2\"]\n[[links]]\nbetween = [\"sw2\", \"d\"]\n[[flows]]\nname = \"cross\"\nsrc = \"a\"\ndst = \"d\"\nrate = \"1Gbps\"\n"), path: "flows.1.dst", shows: "\"d\"" },
        Case { what: "schedule out of order", edit: Set(&["schedule.1.at=1ms"]), path: "schedule.1.at", shows: "1ms" },
        Case { what: "schedule after the end", edit: Set(&["schedule.1.at=11ms"]), path: "schedule.1.at", shows: "11ms" },
        Case { what: "schedule rate above the link", edit: Set(&["schedule.0.rate=20Gbps"]), path: "schedule.0.rate", shows: "20Gbps" },
        Case { what: "empty topology", edit: Whole("[meta]\nduration = \"1ms\"\n"), path: "hosts", shows: "empty topology" },
        Case { what: "duplicate host names", edit: Replace("name = \"b\"", "name = \"a\""), path: "hosts.1.name", shows: "\"a\"" },
        Case { what: "switch named like a host", edit: Replace("name = \"sw\"", "name = \"b\""), path: "switches.0.name", shows: "\"b\"" },
        Case { what: "duplicate flow names", edit: Append("[[flows]]\nname = \"f0\"\nsrc = \"b\"\ndst = \"a\"\nrate = \"1Gbps\"\n"), path: "flows.1.name", shows: "\"f0\"" },
        Case { what: "bad port name in schedule", edit: Set(&["schedule.0.port=\"sw->nowhere\""]), path: "schedule.0.port", shows: "sw->nowhere" },
        Case { what: "bad port name in cp_ports", edit: Set(&["cc.qcn.cp_ports=[\"sw->a\", \"b->a\"]"]), path: "cc.qcn.cp_ports.1", shows: "b->a" },
        Case { what: "CP on a host port", edit: Set(&["cc.qcn.cp_ports=[\"a->sw\"]"]), path: "cc.qcn.cp_ports", shows: "a->sw" },
        Case { what: "--set without =", edit: Set(&["cc.mode"]), path: "--set", shows: "cc.mode" },
        Case { what: "--set index out of range", edit: Set(&["flows.3.rate=1Gbps"]), path: "flows.3", shows: "3" },
        Case { what: "bad capacity string", edit: Set(&["defaults.buffer=lots"]), path: "defaults.buffer", shows: "lots" },
        Case { what: "zero-frame capacity", edit: Set(&["defaults.buffer=0frames"]), path: "defaults.buffer", shows: "0frames" },
        Case { what: "frame too small", edit: Set(&["flows.0.frame=32B"]), path: "flows.0.frame", shows: "32B" },
        Case { what: "frame too large", edit: Set(&["flows.0.frame=10000B"]), path: "flows.0.frame", shows: "10000B" },
        Case { what: "flow faster than its NIC", edit: Set(&["flows.0.rate=11Gbps"]), path: "flows.0.rate", shows: "11Gbps" },
        Case { what: "flow stops before it starts", edit: Set(&["flows.0.start=5ms", "flows.0.stop=4ms"]), path: "flows.0.stop", shows: "4ms" },
        Case { what: "flow starts after the end", edit: Set(&["flows.0.start=10ms"]), path: "flows.0.start", shows: "10ms" },
        Case { what: "link to an unknown node", edit: Replace("between = [\"sw\", \"b\"]", "between = [\"sw\", \"bb\"]"), path: "links.1.between.1", shows: "\"bb\"" },
        Case { what: "link from a node to itself", edit: Replace("between = [\"sw\", \"b\"]", "between = [\"sw\", \"sw\"]"), path: "links.1.between", shows: "sw" },
        Case { what: "host with two links", edit: Append("[[links]]\nbetween = [\"a\", \"b\"]\n"), path: "links.2.between", shows: "\"a\"" },
        Case { what: "zero duration", edit: Set(&["meta.duration=0s"]), path: "meta.duration", shows: "0s" },
        Case { what: "time finer than a picosecond", edit: Set(&["meta.duration=0.5ps"]), path: "meta.duration", shows: "0.5ps" },
        Case { what: "seed of the wrong type", edit: Set(&["meta.seed=\"one\""]), path: "meta.seed", shows: "one" },
        Case { what: "negative seed", edit: Set(&["meta.seed=-1"]), path: "meta.seed", shows: "-1" },
        Case { what: "unknown cc mode", edit: Set(&["cc.mode=dctcp"]), path: "cc.mode", shows: "dctcp" },
        Case { what: "NaN weight", edit: Set(&["cc.qcn.cp.w=nan"]), path: "cc.qcn.cp.w", shows: "NaN" },
        Case { what: "unknown event kind", edit: Set(&["metrics.events=[\"cnm_sent\", \"pauses\"]"]), path: "metrics.events.1", shows: "pauses" },
        Case { what: "zero throughput bin", edit: Set(&["metrics.throughput_bin=0s"]), path: "metrics.throughput_bin", shows: "0s" },
        Case { what: "bad bottleneck port", edit: Set(&["analysis.bottleneck=\"sw->c\""]), path: "analysis.bottleneck", shows: "sw->c" },
        Case { what: "variant with a bad value", edit: Append("[[variants]]\nname = \"v\"\nset = { \"flows.0.rate\" = \"12Gbps\" }\n"), path: "variants.0.set: flows.0.rate", shows: "12Gbps" },
        Case { what: "min_rate above the source NIC's line rate", edit: Set(&["links.0.rate=1Mbps", "flows.0.rate=1Mbps"]), path: "cc.qcn.rp.min_rate", shows: "5Mbps" },
        Case { what: "min_dec_factor zero", edit: Set(&["cc.qcn.rp.min_dec_factor=0.0"]), path: "cc.qcn.rp.min_dec_factor", shows: "0" },
        Case { what: "zero quick_duration", edit: Set(&["meta.quick_duration=0s"]), path: "meta.quick_duration", shows: "0s" },
        Case { what: "explicit path over a missing link", edit: Set(&["flows.0.path=[\"a\", \"b\"]"]), path: "flows.0.path.1", shows: "\"b\"" },
        Case { what: "zero flow size", edit: Set(&["flows.0.size=0B"]), path: "flows.0.size", shows: "0B" },
        Case { what: "flow size beyond 1 PB (would wrap the i64 size columns at 2^63)", edit: Set(&["flows.0.size=9223372036854775808B"]), path: "flows.0.size", shows: "9223372036854775808B" },
        Case { what: "CNM frame too small", edit: Set(&["cc.qcn.cnm_frame=10B"]), path: "cc.qcn.cnm_frame", shows: "10B" },
        Case { what: "hosts as a table, not an array", edit: Replace("[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"", "[hosts]\nname = \"a\""), path: "hosts", shows: "a table" },
        Case { what: "sweep mode unknown", edit: Append("[sweep]\nmode = \"cube\"\n"), path: "sweep.mode", shows: "cube" },
        Case { what: "sweep with zero replications", edit: Append("[sweep]\nreplications = 0\n"), path: "sweep.replications", shows: "0" },
        Case { what: "sweep axis not an array", edit: Append("[sweep.axes]\n\"cc.qcn.cp.q_eq\" = \"26KB\"\n"), path: "sweep.axes.\"cc.qcn.cp.q_eq\"", shows: "26KB" },
        Case { what: "sweep zip axes of different lengths", edit: Append("[sweep]\nmode = \"zip\"\n[sweep.axes]\n\"cc.qcn.cp.q_eq\" = [\"16KB\", \"26KB\"]\n\"flows.0.rate\" = [\"1Gbps\"]\n"), path: "sweep.axes.\"flows.0.rate\"", shows: "as many as axis" },
        Case { what: "unknown key in a variant's set", edit: Append("[[variants]]\nname = \"v\"\nset = { \"cc.qcn.cp.qeq\" = \"1KB\" }\n"), path: "variants.0.set: cc.qcn.cp.qeq", shows: "unknown key" },
        Case { what: "an inter-frame gap too large", edit: Set(&["defaults.ifg=2000B"]), path: "defaults.ifg", shows: "0B to 1000B" },
        Case { what: "a preamble without a unit", edit: Set(&["links.0.preamble=8"]), path: "links.0.preamble", shows: "8" },
        Case { what: "a negative feedback latency", edit: Set(&["cc.feedback_latency=-1us"]), path: "cc.feedback_latency", shows: "-1us" },
        Case { what: "an unknown rate-limiter start", edit: Set(&["cc.rl_start=half"]), path: "cc.rl_start", shows: "half" },
        Case { what: "an unknown feedback route", edit: Set(&["cc.feedback_route=ecmp"]), path: "cc.feedback_route", shows: "ecmp" },
        Case { what: "meta.variant naming no variant", edit: Set(&["meta.variant=nope"]), path: "meta.variant", shows: "it has none" },
        Case { what: "a fluid step below what the solver can do in its step budget", edit: Append("[fluid]\ndt = \"1ps\"\n"), path: "fluid.dt", shows: "a step of at least 10ps" },
        Case { what: "a fluid step above the duration", edit: Append("[fluid]\ndt = \"1s\"\n"), path: "fluid.dt", shows: "at most meta.duration (10ms)" },
        Case { what: "a deadlock detection interval below one frame of the fastest link", edit: Set(&["flow_control.mode=pfc", "flow_control.deadlock_detection=1ps"]), path: "flow_control.deadlock_detection", shows: "at least 51200ps (one 64-byte frame at the fastest link's rate, 10Gbps)" },
        Case { what: "a watchdog interval below one frame of the fastest link", edit: Set(&["flow_control.mode=pause", "flow_control.watchdog=50ns"]), path: "flow_control.watchdog", shows: "\"50ns\"" },
        Case { what: "meta.variant not a string", edit: Set(&["meta.variant=3"]), path: "meta.variant", shows: "3" },
        Case { what: "a variant selecting a variant", edit: Append("[[variants]]\nname = \"v\"\nset = { \"meta.variant\" = \"v\" }\n"), path: "variants.0.set: meta.variant", shows: "cannot select" },
        Case { what: "bad queue port in a list", edit: Set(&["metrics.queue_ports=[\"sw->b\", \"sw->zz\"]"]), path: "metrics.queue_ports.1", shows: "sw->zz" },
        Case { what: "negative link delay", edit: Replace("between = [\"sw\", \"b\"]", "between = [\"sw\", \"b\"]\ndelay = \"-1us\""), path: "links.1.delay", shows: "-1us" },
        Case { what: "TOML syntax error", edit: Append("[[flows]\n"), path: "", shows: "line" },
        Case { what: "group with no members", edit: Append("[[groups]]\nname = \"g\"\nmembers = []\n"), path: "groups.0.members", shows: "[]" },
        Case { what: "group without a members list", edit: Append("[[groups]]\nname = \"g\"\n"), path: "groups.0.members", shows: "missing" },
        Case { what: "unknown group member", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"b\", \"zz\"]\n"), path: "groups.0.members.1", shows: "\"zz\"" },
        Case { what: "a switch as group member", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"sw\"]\n"), path: "groups.0.members.0", shows: "\"sw\"" },
        Case { what: "member listed twice", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"b\", \"b\"]\n"), path: "groups.0.members.1", shows: "\"b\"" },
        Case { what: "duplicate group name", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"b\"]\n[[groups]]\nname = \"g\"\nmembers = [\"a\"]\n"), path: "groups.1.name", shows: "\"g\"" },
        Case { what: "MAC address without the group bit", edit: Append("[[groups]]\nname = \"g\"\nmac = \"00:00:5e:00:00:01\"\nmembers = [\"b\"]\n"), path: "groups.0.mac", shows: "00:00:5e:00:00:01" },
        Case { what: "flow to an unknown group", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"b\"]\n[[flows]]\nname = \"m\"\nsrc = \"a\"\ngroup = \"h\"\nrate = \"1Gbps\"\n"), path: "flows.1.group", shows: "\"h\"" },
        Case { what: "flow with dst and group", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"b\"]\n[[flows]]\nname = \"m\"\nsrc = \"a\"\ngroup = \"g\"\nrate = \"1Gbps\"\ndst = \"b\"\n"), path: "flows.1.dst", shows: "group" },
        Case { what: "multicast flow with a path", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"b\"]\n[[flows]]\nname = \"m\"\nsrc = \"a\"\ngroup = \"g\"\nrate = \"1Gbps\"\npath = [\"a\", \"sw\", \"b\"]\n"), path: "flows.1.path", shows: "multicast" },
        Case { what: "group whose only member is the source", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"a\"]\n[[flows]]\nname = \"m\"\nsrc = \"a\"\ngroup = \"g\"\nrate = \"1Gbps\"\n"), path: "flows.1.group", shows: "\"a\"" },
        Case { what: "unreachable member", edit: Append("[[hosts]]\nname = \"c\"\n[[hosts]]\nname = \"d\"\n[[links]]\nbetween = [\"c\", \"d\"]\n[[groups]]\nname = \"g\"\nmembers = [\"b\", \"d\"]\n[[flows]]\nname = \"m\"\nsrc = \"a\"\ngroup = \"g\"\nrate = \"1Gbps\"\n"), path: "flows.1.group", shows: "\"d\" is not" },
        Case { what: "explicit tree that misses a member", edit: Append("[[hosts]]\nname = \"c\"\n[[links]]\nbetween = [\"sw\", \"c\"]\n[[groups]]\nname = \"g\"\nmembers = [\"b\", \"c\"]\ntree = [\"sw->c\"]\n[[flows]]\nname = \"m\"\nsrc = \"a\"\ngroup = \"g\"\nrate = \"1Gbps\"\n"), path: "groups.0.tree", shows: "\"b\" is not reached" },
        Case { what: "explicit tree with a dead end", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"b\"]\ntree = []\n[[flows]]\nname = \"m\"\nsrc = \"a\"\ngroup = \"g\"\nrate = \"1Gbps\"\n"), path: "groups.0.tree", shows: "dead end" },
        Case { what: "explicit tree towards a non-member host", edit: Append("[[hosts]]\nname = \"c\"\n[[links]]\nbetween = [\"sw\", \"c\"]\n[[groups]]\nname = \"g\"\nmembers = [\"b\"]\ntree = [\"sw->b\", \"sw->c\"]\n"), path: "groups.0.tree.1", shows: "sw->c" },
        Case { what: "explicit tree port from a host", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"b\"]\ntree = [\"a->sw\"]\n"), path: "groups.0.tree.0", shows: "a->sw" },
        Case { what: "explicit tree port unknown", edit: Append("[[groups]]\nname = \"g\"\nmembers = [\"b\"]\ntree = [\"sw->zz\"]\n"), path: "groups.0.tree.0", shows: "sw->zz" },
        Case { what: "explicit tree with a loop", edit: Append("[[switches]]\nname = \"s2\"\n[[switches]]\nname = \"s3\"\n[[links]]\nbetween = [\"sw\", \"s2\"]\n[[links]]\nbetween = [\"s2\", \"s3\"]\n[[links]]\nbetween = [\"s3\", \"sw\"]\n[[groups]]\nname = \"g\"\nmembers = [\"b\"]\ntree = [\"sw->b\", \"sw->s2\", \"s2->s3\", \"s3->sw\"]\n[[flows]]\nname = \"m\"\nsrc = \"a\"\ngroup = \"g\"\nrate = \"1Gbps\"\n"), path: "groups.0.tree", shows: "reached twice" },
        Case { what: "unknown multicast feedback", edit: Set(&["cc.qcn.multicast_feedback=best"]), path: "cc.qcn.multicast_feedback", shows: "best" },
        Case { what: "statistics window starting at the end", edit: Set(&["analysis.stats_from=10ms"]), path: "analysis.stats_from", shows: "10ms" },
        Case { what: "statistics window beyond the run", edit: Set(&["analysis.stats_to=20ms"]), path: "analysis.stats_to", shows: "20ms" },
        Case { what: "min_dec_factor out of range", edit: Set(&["cc.qcn.rp.min_dec_factor=1.5"]), path: "cc.qcn.rp.min_dec_factor", shows: "1.5" },
        Case { what: "BA threshold zero", edit: Set(&["cc.qcn.ba.qlen_threshold=0"]), path: "cc.qcn.ba.qlen_threshold", shows: "0" },
        Case { what: "BA hold zero", edit: Set(&["cc.qcn.ba.hold=0s"]), path: "cc.qcn.ba.hold", shows: "0" },
        Case { what: "BA threshold as a size", edit: Set(&["cc.qcn.ba.qlen_threshold=9KB"]), path: "cc.qcn.ba.qlen_threshold", shows: "9KB" },
        Case { what: "unknown key in sonar", edit: Set(&["cc.qcn.sonar.ping=1ms"]), path: "cc.qcn.sonar.ping", shows: "unknown key" },
        Case { what: "SONAR enabled not a bool", edit: Set(&["cc.qcn.sonar.enabled=\"on\""]), path: "cc.qcn.sonar.enabled", shows: "on" },
        Case { what: "SONAR SF zero", edit: Set(&["cc.qcn.sonar.sf=0s"]), path: "cc.qcn.sonar.sf", shows: "0" },
        Case { what: "SONAR WE start unknown", edit: Set(&["cc.qcn.sonar.we_starts=echo"]), path: "cc.qcn.sonar.we_starts", shows: "echo" },
        Case { what: "SONAR WE multiple negative", edit: Set(&["cc.qcn.sonar.we_rtt_multiple=-1"]), path: "cc.qcn.sonar.we_rtt_multiple", shows: "-1" },
        Case { what: "push-back timer without a unit", edit: Set(&["cc.qcn.pushback.timer=\"5\""]), path: "cc.qcn.pushback.timer", shows: "5" },
        Case { what: "push-back step-back unknown", edit: Set(&["cc.qcn.pushback.step_back=half"]), path: "cc.qcn.pushback.step_back", shows: "half" },
        Case { what: "unknown key in pushback", edit: Set(&["cc.qcn.pushback.fb99=true"]), path: "cc.qcn.pushback.fb99", shows: "unknown key" },
        Case { what: "RP timer_enabled not a bool", edit: Set(&["cc.qcn.rp.timer_enabled=1"]), path: "cc.qcn.rp.timer_enabled", shows: "1" },
        Case { what: "RP start_rate without start_active", edit: Set(&["cc.qcn.rp.start_rate=1Gbps"]), path: "cc.qcn.rp.start_rate", shows: "1Gbps" },
        Case { what: "RP start_rate not a rate", edit: Set(&["cc.qcn.rp.start_active=true", "cc.qcn.rp.start_rate=fast"]), path: "cc.qcn.rp.start_rate", shows: "fast" },
        Case { what: "RP start_rate above the line rate", edit: Set(&["cc.qcn.rp.start_active=true", "cc.qcn.rp.start_rate=20Gbps"]), path: "cc.qcn.rp.start_rate", shows: "20Gbps" },
        Case { what: "RP start_rate below min_rate", edit: Set(&["cc.qcn.rp.start_active=true", "cc.qcn.rp.start_rate=1Mbps"]), path: "cc.qcn.rp.start_rate", shows: "1Mbps" },
        Case { what: "downward factor below one", edit: Set(&["analysis.downward_factor=0.5"]), path: "analysis.downward_factor", shows: "0.5" },
        Case { what: "count zero", edit: Set(&["hosts.0.count=0"]), path: "hosts.0.count", shows: "0" },
        Case { what: "count of identical copies", edit: Set(&["hosts.1.count=2"]), path: "hosts.1.count", shows: "2" },
        Case { what: "count as a string", edit: Set(&["flows.0.count=\"2\""]), path: "flows.0.count", shows: "2" },
        Case { what: "unknown transient event kind", edit: Set(&["metrics.events=[\"ba_change\", \"sonar_ping\"]"]), path: "metrics.events.1", shows: "sonar_ping" },
        // BCN
        Case { what: "BCN gd makes a rate negative (gd*fb_max >= 1)", edit: Set(&["cc.mode=bcn", "cc.bcn.rp.gd=0.001"]), path: "cc.bcn.rp.gd", shows: "0.001" },
        Case { what: "BCN gd*fb_max exactly 1", edit: Set(&["cc.mode=bcn", "cc.bcn.cp.fb_max=2000.0", "cc.bcn.rp.gd=0.0005"]), path: "cc.bcn.rp.gd", shows: "fb_max = 2000" },
        Case { what: "BCN larger Qeq pushes the default fb_max past 1/gd", edit: Set(&["cc.mode=bcn", "cc.bcn.cp.q_eq=100KB"]), path: "cc.bcn.rp.gd", shows: "0.00026" },
        Case { what: "BCN gd above 1", edit: Set(&["cc.bcn.rp.gd=1.5"]), path: "cc.bcn.rp.gd", shows: "1.5" },
        Case { what: "BCN negative gi", edit: Set(&["cc.bcn.rp.gi=-0.5"]), path: "cc.bcn.rp.gi", shows: "-0.5" },
        Case { what: "BCN jitter not below the window", edit: Set(&["cc.bcn.cp.sample_window=10KB", "cc.bcn.cp.sample_jitter=10KB"]), path: "cc.bcn.cp.sample_jitter", shows: "10000B" },
        Case { what: "BCN Qsc garbage", edit: Set(&["cc.bcn.cp.q_sc=high"]), path: "cc.bcn.cp.q_sc", shows: "high" },
        Case { what: "BCN Qsc zero", edit: Set(&["cc.bcn.cp.q_sc=0B"]), path: "cc.bcn.cp.q_sc", shows: "0B" },
        Case { what: "BCN Qsc a number", edit: Set(&["cc.bcn.cp.q_sc=5"]), path: "cc.bcn.cp.q_sc", shows: "5" },
        Case { what: "BCN page zero", edit: Set(&["cc.bcn.cp.page=0B"]), path: "cc.bcn.cp.page", shows: "0B" },
        Case { what: "BCN unknown severe_check", edit: Set(&["cc.bcn.cp.severe_check=always"]), path: "cc.bcn.cp.severe_check", shows: "always" },
        Case { what: "BCN fb_max zero", edit: Set(&["cc.bcn.cp.fb_max=0.0"]), path: "cc.bcn.cp.fb_max", shows: "0" },
        Case { what: "BCN fb_max a word other than off", edit: Set(&["cc.bcn.cp.fb_max=\"none\""]), path: "cc.bcn.cp.fb_max", shows: "\"off\" or a number" },
        Case { what: "unknown QCN quantiser", edit: Set(&["cc.qcn.cp.quantiser=\"log\""]), path: "cc.qcn.cp.quantiser", shows: "log" },
        Case { what: "QCN fb_unit zero", edit: Set(&["cc.qcn.cp.fb_unit=\"0B\""]), path: "cc.qcn.cp.fb_unit", shows: "0B" },
        Case { what: "unknown QCN sampling", edit: Set(&["cc.qcn.cp.sampling=\"random\""]), path: "cc.qcn.cp.sampling", shows: "random" },
        Case { what: "unknown QCN qold", edit: Set(&["cc.qcn.cp.qold=\"never\""]), path: "cc.qcn.cp.qold", shows: "never" },
        Case { what: "unknown QCN samples", edit: Set(&["cc.qcn.cp.samples=\"dropped\""]), path: "cc.qcn.cp.samples", shows: "dropped" },
        Case { what: "NIC feedback with a CP sampling arrivals", edit: Set(&["cc.qcn.feedback=\"nic\"", "cc.qcn.cp.samples=\"arrivals\""]), path: "cc.qcn.feedback", shows: "arrivals" },
        Case { what: "NIC feedback with every-frame sampling", edit: Set(&["cc.qcn.feedback=\"nic\"", "cc.qcn.cp.sampling=\"every_frame\""]), path: "cc.qcn.feedback", shows: "every_frame" },
        Case { what: "BCN Rmin above the line rate", edit: Set(&["cc.mode=bcn", "cc.bcn.rp.r_min=20Gbps"]), path: "cc.bcn.rp.r_min", shows: "20Gbps" },
        Case { what: "BCN min_rate above the line rate", edit: Set(&["cc.mode=bcn", "links.0.rate=1Mbps", "flows.0.rate=1Mbps", "cc.bcn.rp.r_min=1Mbps"]), path: "cc.bcn.rp.min_rate", shows: "5Mbps" },
        Case { what: "BCN negative back-off range", edit: Set(&["cc.bcn.rp.t_max=-1ms"]), path: "cc.bcn.rp.t_max", shows: "-1ms" },
        Case { what: "BCN zero drift interval", edit: Set(&["cc.bcn.rp.drift_interval=0s"]), path: "cc.bcn.rp.drift_interval", shows: "0ps" },
        Case { what: "BCN drift not a bool", edit: Set(&["cc.bcn.rp.drift=yes"]), path: "cc.bcn.rp.drift", shows: "yes" },
        Case { what: "BCN message frame too small", edit: Set(&["cc.bcn.frame=10B"]), path: "cc.bcn.frame", shows: "10B" },
        Case { what: "BCN CP on a host port", edit: Set(&["cc.bcn.cp_ports=a->sw"]), path: "cc.bcn.cp_ports", shows: "a->sw" },
        Case { what: "BCN detection_off names a host", edit: Set(&["cc.bcn.detection_off=[\"sw\", \"a\"]"]), path: "cc.bcn.detection_off.1", shows: "\"a\"" },
        Case { what: "BCN unknown key", edit: Set(&["cc.bcn.rp.gain=1"]), path: "cc.bcn.rp.gain", shows: "unknown key" },
        Case { what: "memory_switches names a host", edit: Set(&["metrics.memory_switches=[\"a\"]"]), path: "metrics.memory_switches.0", shows: "\"a\"" },
        Case { what: "memory_switches garbage", edit: Set(&["metrics.memory_switches=all"]), path: "metrics.memory_switches", shows: "all" },
        Case { what: "BCN rl_queue too small", edit: Set(&["cc.bcn.rp.rl_queue=10B"]), path: "cc.bcn.rp.rl_queue", shows: "10B" },
        Case { what: "unknown feedback location", edit: Set(&["cc.qcn.feedback=\"cp\""]), path: "cc.qcn.feedback", shows: "cp" },
        Case { what: "feedback of the wrong type", edit: Set(&["cc.qcn.feedback=1"]), path: "cc.qcn.feedback", shows: "1" },
        Case { what: "ConMes interval below 64 B", edit: Set(&["cc.qcn.feedback=\"nic\"", "cc.qcn.nic.conmes_interval=10B"]), path: "cc.qcn.nic.conmes_interval", shows: "10B" },
        Case { what: "ConMes interval given as a time", edit: Set(&["cc.qcn.nic.conmes_interval=1ms"]), path: "cc.qcn.nic.conmes_interval", shows: "1ms" },
        Case { what: "ConMes frame too large", edit: Set(&["cc.qcn.nic.conmes_frame=2000B"]), path: "cc.qcn.nic.conmes_frame", shows: "2000B" },
        Case { what: "unknown NIC sample count", edit: Set(&["cc.qcn.nic.sample_count=\"bytes\""]), path: "cc.qcn.nic.sample_count", shows: "bytes" },
        Case { what: "unknown key in cc.qcn.nic", edit: Set(&["cc.qcn.nic.interval=1KB"]), path: "cc.qcn.nic.interval", shows: "unknown key" },
        Case { what: "NIC feedback with representative multicast feedback", edit: Set(&["cc.qcn.feedback=\"nic\"", "cc.qcn.multicast_feedback=\"representative\""]), path: "cc.qcn.feedback", shows: "representative" },
        Case { what: "NIC feedback with push-back", edit: Set(&["cc.qcn.feedback=\"nic\"", "cc.qcn.pushback.enabled=true"]), path: "cc.qcn.feedback", shows: "pushback" },
        Case { what: "cc.qcn.nic not a table", edit: Set(&["cc.qcn.nic=3"]), path: "cc.qcn.nic", shows: "3" },
        // ---- flow control
        Case { what: "unknown flow-control mode", edit: Set(&["flow_control.mode=xoff"]), path: "flow_control.mode", shows: "xoff" },
        Case { what: "unknown watermark mode", edit: Set(&["flow_control.mode=pause", "flow_control.watermark=shared"]), path: "flow_control.watermark", shows: "shared" },
        Case { what: "global watermark beside a shared buffer", edit: Set(&["flow_control.mode=pause", "flow_control.watermark=global", "shared_buffer.size=1MB"]), path: "flow_control.watermark", shows: "xoff_scope = \"pool\"" },
        Case { what: "global watermark with buffers in frames", edit: Set(&["flow_control.mode=pause", "flow_control.watermark=global", "defaults.buffer=100frames"]), path: "flow_control.watermark", shows: "100 frames" },
        Case { what: "global watermark: XOFF within a frame of a port's buffer", edit: Set(&["flow_control.mode=pause", "flow_control.watermark=global", "flow_control.xoff=149KB"]), path: "flow_control.xoff", shows: "149000B" },
        Case { what: "XON above XOFF", edit: Set(&["flow_control.mode=pause", "flow_control.xon=140KB"]), path: "flow_control.xon", shows: "140000B" },
        Case { what: "XON equal to XOFF", edit: Set(&["flow_control.mode=pause", "flow_control.xon=130KB"]), path: "flow_control.xon", shows: "130000B" },
        Case { what: "headroom above XOFF smaller than one frame", edit: Set(&["flow_control.mode=pause", "flow_control.xoff=149KB"]), path: "flow_control.xoff", shows: "149000B" },
        Case { what: "XOFF above a buffer given in frames", edit: Set(&["flow_control.mode=pfc", "defaults.buffer=20frames", "flow_control.xoff=29KB", "flow_control.xon=1KB"]), path: "flow_control.xoff", shows: "29000B" },
        Case { what: "PFC on a priority that has no queue", edit: Set(&["flow_control.mode=pfc", "flow_control.queues=4", "flow_control.priorities=[3, 5]"]), path: "flow_control.priorities.1", shows: "5" },
        Case { what: "PFC priorities not a list", edit: Set(&["flow_control.mode=pfc", "flow_control.priorities=3"]), path: "flow_control.priorities", shows: "3" },
        Case { what: "flow on a priority that has no queue", edit: Set(&["flow_control.mode=pfc", "flow_control.queues=2", "flows.0.priority=3"]), path: "flows.0.priority", shows: "3" },
        Case { what: "CNM priority that has no queue", edit: Set(&["flow_control.mode=pfc", "flow_control.queues=2", "flow_control.cnm_priority=7"]), path: "flow_control.cnm_priority", shows: "7" },
        Case { what: "flow priority above 7", edit: Set(&["flows.0.priority=8"]), path: "flows.0.priority", shows: "8" },
        Case { what: "zero pause quanta", edit: Set(&["flow_control.mode=pause", "flow_control.pause_quanta=0"]), path: "flow_control.pause_quanta", shows: "0" },
        Case { what: "pause quanta beyond 16 bits", edit: Set(&["flow_control.mode=pause", "flow_control.pause_quanta=65536"]), path: "flow_control.pause_quanta", shows: "65536" },
        Case { what: "flow control on a host", edit: Set(&["flow_control.mode=pause", "flow_control.switches=[\"sw\", \"a\"]"]), path: "flow_control.switches.1", shows: "\"a\"" },
        Case { what: "unknown key in flow_control", edit: Set(&["flow_control.xof=1KB"]), path: "flow_control.xof", shows: "unknown key" },
        Case { what: "refresh of zero", edit: Set(&["flow_control.mode=pause", "flow_control.refresh=0"]), path: "flow_control.refresh", shows: "0" },
        Case { what: "negative response delay", edit: Set(&["flow_control.mode=pause", "flow_control.response_delay=-1us"]), path: "flow_control.response_delay", shows: "-1us" },
    ]
}

fn apply(edit: &Edit) -> (String, Vec<String>) {
    match edit {
        Set(ov) => (BASE.to_string(), ov.iter().map(|s| s.to_string()).collect()),
        Replace(a, b) => {
            assert!(BASE.contains(a), "base has no {a:?}");
            (BASE.replacen(a, b, 1), vec![])
        }
        Append(t) => (format!("{BASE}\n{t}"), vec![]),
        Whole(t) => (t.to_string(), vec![]),
    }
}

fn check(cases: &[Case]) -> Vec<String> {
    let mut failures = Vec::new();
    for c in cases {
        let (text, ov) = apply(&c.edit);
        match scenario::load(&text, &ov) {
            Ok(_) => failures.push(format!("{}: accepted", c.what)),
            Err(e) => {
                let shown = e.to_string();
                if e.path != c.path {
                    failures.push(format!(
                        "{}: path {:?}, expected {:?} ({shown})",
                        c.what, e.path, c.path
                    ));
                } else if !shown.contains(c.shows) {
                    failures.push(format!(
                        "{}: message {shown:?} does not show {:?}",
                        c.what, c.shows
                    ));
                }
            }
        }
    }
    failures
}

#[test]
fn base_scenario_is_valid() {
    scenario::load(BASE, &[]).expect("the base scenario must be valid");
    // and each override used below is well-formed on its own for a valid value
    scenario::load(
        BASE,
        &["flows.0.rate=1Gbps".into(), "cc.qcn.cp.q_eq=20KB".into()],
    )
    .expect("valid overrides");
    // BCN with the study's parameters, and with every option switched on
    scenario::load(
        BASE,
        &[
            "cc.mode=bcn".into(),
            "cc.bcn.cp.q_sc=112.5KB".into(),
            "cc.bcn.rp.t_max=1ms".into(),
            "cc.bcn.rp.drift=true".into(),
            "cc.bcn.detection_off=[\"sw\"]".into(),
        ],
    )
    .expect("valid BCN overrides");
}

#[test]
fn malformed_scenarios_are_rejected_with_field_paths() {
    let f = check(&cases());
    assert!(
        f.is_empty(),
        "{} of {} cases wrong:\n{}",
        f.len(),
        cases().len(),
        f.join("\n")
    );
}

#[test]
fn an_unrelated_unknown_key_gets_no_suggestion() {
    let e = scenario::load(BASE, &["meta.zzzzzz=1".into()]).expect_err("unknown key");
    assert!(!e.to_string().contains("did you mean"), "{e}");
}

#[test]
fn wildcard_overrides_set_every_element() {
    let text =
        format!("{BASE}\n[[flows]]\nname = \"f1\"\nsrc = \"b\"\ndst = \"a\"\nrate = \"1Gbps\"\n");
    let sc = scenario::load(
        &text,
        &["flows.*.rate=2Gbps".into(), "links.*.delay=3us".into()],
    )
    .expect("wildcards apply to every element");
    for f in sc.resolved["flows"].as_array().unwrap() {
        assert_eq!(f["rate"], serde_json::json!("2Gbps"), "{f}");
    }
    let links = sc.resolved["links"].as_array().unwrap();
    assert_eq!(links.len(), 2);
    let one = scenario::load(
        &text,
        &["links.0.delay=3us".into(), "links.1.delay=3us".into()],
    )
    .expect("the same by index");
    assert_eq!(sc.resolved["links"], one.resolved["links"]);
    // A later indexed override wins over an earlier wildcard.
    let mixed = scenario::load(
        &text,
        &["flows.*.rate=2Gbps".into(), "flows.1.rate=3Gbps".into()],
    )
    .expect("mixed");
    assert_eq!(
        mixed.resolved["flows"][0]["rate"],
        serde_json::json!("2Gbps")
    );
    assert_eq!(
        mixed.resolved["flows"][1]["rate"],
        serde_json::json!("3Gbps")
    );
}

#[test]
fn sweep_table_is_accepted_and_recorded() {
    let text = format!(
        "{BASE}\n[sweep]\nreplications = 4\n[sweep.axes]\n\"cc.qcn.cp.q_eq\" = [\"16KB\", \"26KB\"]\n"
    );
    let sc = scenario::load(&text, &[]).expect("a valid [sweep] table");
    assert_eq!(
        sc.resolved["sweep"],
        serde_json::json!({"mode": "grid", "replications": 4,
                           "axes": {"cc.qcn.cp.q_eq": ["16KB", "26KB"]}})
    );
    // The table does not change the run's own scenario.
    let plain = scenario::load(BASE, &[]).expect("base");
    let mut with = sc.resolved.clone();
    with.as_object_mut().unwrap().remove("sweep");
    assert_eq!(with, plain.resolved);
}

/// Two variants that are each valid but not together (Qeq above the smaller buffer).
fn exclusive_variants() -> String {
    format!(
        "{BASE}\n[[variants]]\nname = \"big-qeq\"\nset = {{ \"cc.qcn.cp.q_eq\" = \"100KB\" }}\n\
         [[variants]]\nname = \"small-buffer\"\nset = {{ \"defaults.buffer\" = \"60KB\" }}\n"
    )
}

fn resolved_at<'a>(sc: &'a scenario::Scenario, path: &[&str]) -> &'a serde_json::Value {
    path.iter().fold(&sc.resolved, |v, k| &v[*k])
}

#[test]
fn meta_variant_runs_one_variant_and_the_overrides_win() {
    let text = exclusive_variants();
    let base = scenario::load(&text, &[]).expect("each variant is valid on its own");
    assert_eq!(
        resolved_at(&base, &["cc", "qcn", "cp", "q_eq"]),
        &serde_json::json!("26000B")
    );
    let big = scenario::load(&text, &["meta.variant=big-qeq".into()]).expect("big-qeq");
    assert_eq!(
        resolved_at(&big, &["cc", "qcn", "cp", "q_eq"]),
        &serde_json::json!("100000B")
    );
    assert_eq!(
        resolved_at(&big, &["meta", "variant"]),
        &serde_json::json!("big-qeq")
    );
    let ov = [
        "meta.variant=big-qeq".to_string(),
        "cc.qcn.cp.q_eq=60KB".into(),
    ];
    let big = scenario::load(&text, &ov).expect("big-qeq with an override");
    assert_eq!(
        resolved_at(&big, &["cc", "qcn", "cp", "q_eq"]),
        &serde_json::json!("60000B")
    );
    let small = scenario::load(&text, &["meta.variant=small-buffer".into()]).expect("small-buffer");
    assert_eq!(
        resolved_at(&small, &["defaults", "buffer"]),
        &serde_json::json!("60KB")
    );
    // Written as plain overrides instead, big-qeq's set is also applied to the check of
    // small-buffer, and that combination is invalid: this is what `meta.variant` is for.
    let e = scenario::load(&text, &["cc.qcn.cp.q_eq=100KB".into()]).expect_err("combination");
    assert!(e.path.starts_with("variants.1.set"), "{e}");
}
