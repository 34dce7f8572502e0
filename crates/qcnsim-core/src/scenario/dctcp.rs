//! `[cc.dctcp]`: DCTCP's marking threshold at the switches, its receiver's ECN echo and its
//! sender's window (docs/models/dctcp.md; the rules are in proto/dctcp.rs). The keys, their
//! defaults and their sources are in the parameter table (params.rs, `cc.dctcp`).

use super::links::port_selection;
use super::params::{self, spec, DCTCP};
use super::reader::{Res, TableReader};
use super::Scenario;
use crate::proto::dctcp::{DctcpParams, Echo, MarkQueue, Threshold};

/// The DCTCP configuration of a scenario. Windows are in MSS (the flow's frame): each flow's
/// [`DctcpParams`] in bytes come from [`DctcpSpec::params`].
#[derive(Debug, Clone)]
pub struct DctcpSpec {
    pub k: Threshold,
    pub mark_queue: MarkQueue,
    pub g: f64,
    pub alpha_start: f64,
    pub echo: Echo,
    pub init_window: u64,
    pub min_window: u64,
    pub max_window: u64,
    pub slow_start: bool,
    pub grow_in_cwr: bool,
    /// Each flow's send queue (its rate-limiter queue, where frames wait for the window), bytes.
    pub rl_queue_bytes: u64,
    /// Egress ports that mark.
    pub cp_ports: Vec<bool>,
}

impl DctcpSpec {
    pub fn off() -> DctcpSpec {
        DctcpSpec {
            k: Threshold::Frames(65),
            mark_queue: MarkQueue::Before,
            g: 1.0 / 16.0,
            alpha_start: 1.0,
            echo: Echo::StateMachine,
            init_window: 10,
            min_window: 2,
            max_window: 10_000,
            slow_start: true,
            grow_in_cwr: false,
            rl_queue_bytes: 150_000,
            cp_ports: Vec::new(),
        }
    }

    /// The rules' parameters for a flow whose MSS (frame) is `mss` bytes.
    pub fn params(&self, mss: u32) -> DctcpParams {
        let b = |w: u64| (w * mss as u64) as f64;
        DctcpParams {
            k: self.k,
            mark_queue: self.mark_queue,
            g: self.g,
            alpha_start: self.alpha_start,
            echo: self.echo,
            init_window: b(self.init_window),
            min_window: b(self.min_window),
            max_window: b(self.max_window),
            slow_start: self.slow_start,
            grow_in_cwr: self.grow_in_cwr,
        }
    }
}

/// Read `[cc.dctcp]`.
pub(super) fn parse_dctcp(sc: &Scenario, t: &mut TableReader) -> Res<DctcpSpec> {
    let s = |k: &str| spec(DCTCP, k);
    let k = params::read_int(t, s("k"))? as u64;
    let k = match params::read_choice(t, s("k_unit"))?.as_str() {
        "bytes" => Threshold::Bytes(k),
        _ => Threshold::Frames(k),
    };
    let mark_queue = match params::read_choice(t, s("mark_queue"))?.as_str() {
        "with" => MarkQueue::With,
        _ => MarkQueue::Before,
    };
    let g = params::read_f64(t, s("g"))?;
    let alpha_start = params::read_f64(t, s("alpha_start"))?;
    let echo = match params::read_choice(t, s("echo"))?.as_str() {
        "count" => Echo::Count,
        _ => Echo::StateMachine,
    };
    let init_window = params::read_int(t, s("init_window"))? as u64;
    let min_window = params::read_int(t, s("min_window"))? as u64;
    let max_window = params::read_int(t, s("max_window"))? as u64;
    if min_window > max_window {
        return Err(t.err(
            "max_window",
            max_window.to_string(),
            format!("a window of at least min_window ({min_window} frames)"),
        ));
    }
    let slow_start = params::read_bool(t, s("slow_start"))?;
    let grow_in_cwr = params::read_choice(t, s("cwr_growth"))? == "grow";
    let rl_queue_bytes = params::read_bytes(t, s("rl_queue"))?;
    let cp_ports = port_selection(sc, t, "cp_ports", "switches")?;
    if let Some(p) = (0..sc.n_ports()).find(|&p| cp_ports[p] && !sc.is_switch_port(p)) {
        return Err(t.err(
            "cp_ports",
            format!("{:?}", sc.port_name(p)),
            "switch egress ports only (ECN marking happens in switches)",
        ));
    }
    Ok(DctcpSpec {
        k,
        mark_queue,
        g,
        alpha_start,
        echo,
        init_window,
        min_window,
        max_window,
        slow_start,
        grow_in_cwr,
        rl_queue_bytes,
        cp_ports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_parameters_scale_with_the_mss() {
        let s = DctcpSpec::off();
        let p = s.params(1500);
        assert_eq!(p.init_window, 15_000.0);
        assert_eq!(p.min_window, 3_000.0);
        assert_eq!(p.g, 0.0625);
    }
}
