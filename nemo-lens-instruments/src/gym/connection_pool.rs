//! The outbound HTTP connection pool, as NeMo-Gym 0.7.0 records it
//! (`connection_pool.py`): how long an acquisition waited for a slot when
//! the pool was full, and how many connections were attempted, by
//! destination.

use std::time::Duration;

use nemo_lens_macros::Instruments;
use opentelemetry::StringValue;

use super::values::{QueueConstraint, QueueOutcome};

/// One acquisition that had to queue for a pool slot: start the guard when
/// it queues (an acquisition that gets a slot at once records nothing),
/// `finish` when it gets one (`queue_outcome = ok`); dropped before, it is
/// recorded as `abandoned`. An outcome set explicitly wins over both: set
/// `Abandoned`, then `finish()`, and it is recorded as `abandoned`.
/// Repeated wake-ups inside one acquisition are one guard. It has no `fail`
/// and no in-flight count. It needs the destination (the Gym server called,
/// or `external` for any other host, as NeMo-Gym 0.7.0 labels them), set on
/// the prepared set before `start`: without it the wait goes out
/// unlabelled and a warning names it once.
///
/// ```
/// use nemo_lens::instruments::gym::{ConnectionPoolQueue, QueueConstraint};
/// use nemo_lens::prelude::*;
///
/// # let meter = Meter::noop();
/// let queued = ConnectionPoolQueue::default()
///     .constraint(QueueConstraint::PerHost)
///     .destination("policy_model")
///     .start(&meter);
/// // ... wait for a slot ...
/// queued.finish();
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core", guard)]
pub struct ConnectionPoolQueue {
    /// Time one queued connection acquisition waited for an aiohttp pool
    /// slot.
    #[histogram(
        "gym.http.connection_pool.queue_duration_ms",
        unit = "ms",
        unit_in_name,
        elapsed,
        buckets = [
            0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 5000, 30000
        ]
    )]
    pub duration: Option<Duration>,

    /// Which limit it waited on
    /// (`nemo.gym.http.connection_pool.queue_constraint`; `unknown` when
    /// not set).
    #[attribute("nemo.gym.http.connection_pool.queue_constraint", default = "unknown")]
    pub constraint: Option<QueueConstraint>,

    /// How it ended (`nemo.gym.http.connection_pool.queue_outcome`): `ok`
    /// when finished, `abandoned` when dropped. A value set explicitly wins
    /// over both: set `Abandoned` (a timeout, say), then `finish()`, and the
    /// wait is recorded as `abandoned`.
    #[attribute(
        "nemo.gym.http.connection_pool.queue_outcome",
        default = "ok",
        on_drop = QueueOutcome::Abandoned
    )]
    pub outcome: Option<QueueOutcome>,

    /// The Gym server called, or `external`
    /// (`nemo.gym.http.destination.server.name`), which every wait NeMo-Gym
    /// 0.7.0 records carries: one left unset is warned about once.
    #[attribute("nemo.gym.http.destination.server.name", required)]
    pub destination: Option<StringValue>,
}

/// Connection attempts by destination, reported from counts the pool keeps:
/// observe them with
/// [`ConnectionPoolConnects::observe`](ConnectionPoolConnects::observe), whose
/// source returns one value per destination with its running total.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// use nemo_lens::instruments::gym::ConnectionPoolConnects;
/// use nemo_lens::Meter;
///
/// # let meter = Meter::noop();
/// let attempts = Arc::new(AtomicU64::new(0)); // the pool adds 1 per connect()
/// let read = Arc::clone(&attempts);
/// let observation = ConnectionPoolConnects::observe(&meter, move || {
///     [ConnectionPoolConnects::default()
///         .destination("policy_model")
///         .connects(read.load(Ordering::Relaxed))]
/// })
/// .expect("one source");
/// # drop(observation);
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core", observe)]
pub struct ConnectionPoolConnects {
    /// Outbound aiohttp connection attempts (connect() calls), including
    /// attempts that later fail or are abandoned.
    #[counter("gym.http.connection_pool.connect_total", unit = "{connection}")]
    pub connects: Option<u64>,

    /// The Gym server called, or `external`
    /// (`nemo.gym.http.destination.server.name`).
    #[attribute("nemo.gym.http.destination.server.name")]
    pub destination: Option<StringValue>,
}
