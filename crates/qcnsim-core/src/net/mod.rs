//! Network building blocks with their own state and tests, used by [`crate::sim`].

pub mod token_bucket;

pub use token_bucket::TokenBucket;
