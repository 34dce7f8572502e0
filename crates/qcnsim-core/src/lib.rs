//! qcnsim-core: a packet-level simulator of Layer-2 congestion control (IEEE 802.1Qau QCN and
//! its relatives). Pure Rust; the Python bindings live in the `qcnsim-py` crate.

pub mod api;
pub mod engine;
pub mod proto;
pub mod units;
