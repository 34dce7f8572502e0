//! Changes of the network itself during a run: links that fail and recover.

pub(in crate::sim) mod links;
