//! qcnsim-core: a packet-level simulator of Layer-2 congestion control (IEEE 802.1Qau QCN and
//! its relatives). Pure Rust; the Python bindings live in the `qcnsim-py` crate.
//!
//! Layers: [`scenario`] (TOML → validated model) → [`sim`] (network, traffic and congestion
//! management on the [`engine`]) → [`table::RunOutput`] column tables (+ [`summary`]); or →
//! [`fluid`] (the QCN and DCQCN fluid models solved from the same scenario). [`api`] is the entry
//! point on top. Imports point down only, in this order (tests/layering.rs keeps it so):
//! `units`, `table` < `engine`, `net` < `proto` < `scenario` < `summary` < `sim`, `fluid` < `api`.

pub mod api;
pub mod engine;
pub mod fluid;
pub mod net;
pub mod proto;
pub mod scenario;
pub mod sim;
pub mod summary;
pub mod table;
pub mod units;
