//! Sans-IO protocol state machines. None of them reads a clock or schedules anything: each
//! receives `now` and an input and returns what to do, so every rule of the pseudo code can be
//! tested as a table of (state before, input, state after, actions).

pub mod ack;
pub mod bcn;
pub mod buffer;
pub mod dcqcn;
pub mod dctcp;
pub mod deadlock;
pub mod gbn;
pub mod hpcc;
pub mod multicast;
pub mod nic_fb;
pub mod pause;
pub mod qcn_ba;
pub mod qcn_cp;
pub mod qcn_rp;
pub mod sonar;
pub mod swift;
pub mod timely;
