//! The fixed value sets of gym attributes, as enums: a misspelled value does
//! not compile, and the number of series stays bounded.

use nemo_lens_macros::AttributeValue;

/// Which limit of the HTTP connection pool a queued acquisition waited on
/// (`nemo.gym.http.connection_pool.queue_constraint`).
#[derive(AttributeValue, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[attribute_value(crate = "::nemo_lens_core", rename_all = "snake_case")]
pub enum QueueConstraint {
    /// The pool's total connection limit.
    Total,
    /// The pool's limit per host.
    PerHost,
    /// A limit the pool did not say.
    Unknown,
}

/// How a queued acquisition of a pool slot ended
/// (`nemo.gym.http.connection_pool.queue_outcome`).
#[derive(AttributeValue, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[attribute_value(crate = "::nemo_lens_core", rename_all = "snake_case")]
pub enum QueueOutcome {
    /// It got a slot.
    Ok,
    /// It gave up (cancelled, timed out) before getting one.
    Abandoned,
}

/// Which memory of a process tree a reading is (`memory.type`).
#[derive(AttributeValue, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[attribute_value(crate = "::nemo_lens_core", rename_all = "snake_case")]
pub enum MemoryType {
    /// Resident set size: pages in memory, shared ones counted in full by
    /// every process that maps them.
    Rss,
    /// Proportional set size: shared pages divided among the processes that
    /// map them, so a tree's sum does not count them twice.
    Pss,
}
