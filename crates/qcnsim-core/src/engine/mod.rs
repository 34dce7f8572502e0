//! The discrete-event engine: an event queue ordered by (time, insertion sequence) and
//! deterministic random-number streams. The event type itself and the run loop live in
//! [`crate::sim`], where the models are.

pub mod hugepage;
pub mod prefetch;
pub mod queue;
pub mod rng;
pub mod timer;

pub use prefetch::prefetch;
pub use queue::EventQueue;
pub use rng::{Rng, StreamId};
pub use timer::{LazyTimer, Popped};
