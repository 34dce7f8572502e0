//! What hosts do besides sourcing frames (sim/core/sources.rs): the transport that recovers
//! lost frames (go-back-N).

pub(in crate::sim) mod transport;
