//! What every room of the simulator uses: the data path's types (sim/core), the recorder's, the
//! engine's and the scenario's, and the rooms by name. Each file of `sim/` starts with
//! `use crate::sim::prelude::*;`.

pub(in crate::sim) use crate::engine::rng::kinds;
pub(in crate::sim) use crate::engine::{
    hugepage, prefetch, EventQueue, LazyTimer, Popped, Rng, StreamId,
};
pub(in crate::sim) use crate::net::TokenBucket;
pub(in crate::sim) use crate::proto::multicast::NO_CPID;
pub(in crate::sim) use crate::proto::qcn_cp::Cp;
pub(in crate::sim) use crate::proto::qcn_rp::{Rp, RpOutput, TimerCmd};
pub(in crate::sim) use crate::scenario::flow_control::FcMode;
pub(in crate::sim) use crate::scenario::transport::AckQueue;
pub(in crate::sim) use crate::scenario::{Capacity, CcMode, NodeKind, Scenario, Traffic};
pub(in crate::sim) use crate::sim::cc::Reaction;
pub(in crate::sim) use crate::table::{ColumnData, RunOutput, Table};
pub(in crate::sim) use crate::units::{self, round_ps, SimTime};
pub(in crate::sim) use std::collections::VecDeque;

pub(in crate::sim) use crate::sim::cc;
pub(in crate::sim) use crate::sim::core::*;
pub(in crate::sim) use crate::sim::fastpath::Needs;
pub(in crate::sim) use crate::sim::host::transport;
pub(in crate::sim) use crate::sim::record::{fct, *};
pub(in crate::sim) use crate::sim::switch::{buffer, deadlock, flow_control, multicast};
pub(in crate::sim) use crate::sim::topology::links;
pub(in crate::sim) use crate::sim::Sim;
