//! What switches do besides forwarding: link-level flow control (802.3x PAUSE, 802.1Qbb PFC)
//! with deadlock detection and the watchdog, shared-buffer memories, multicast replication.

pub(in crate::sim) mod buffer;
pub(in crate::sim) mod deadlock;
pub(in crate::sim) mod flow_control;
pub(in crate::sim) mod multicast;
