//! When owned series end: after an idle timeout
//! (`NEMO_LENS_SERIES_IDLE_TIMEOUT`), or when the application forgets an
//! attribute value ([`Meter::forget`](crate::Meter::forget)).
//!
//! A record raises a flag in its cell (one load, and a store once per
//! sweep); each collection sweeps first, noting when each series was last
//! seen raised. A series idle for the timeout ends: its look-up entries go,
//! exporters stop seeing it, its memory is freed, and the same attributes
//! recorded again make a new series with a new start time.
//!
//! A series never ends while something else holds it: a bound handle the
//! application keeps, or a set's cache of bound handles (which lets go of
//! its own idle handles at each sweep, so the series behind them can end).
//! A record in flight holds the series it records into, so no record is
//! lost to a sweep. Up-down counters away from zero and the series
//! `start_at_zero` made never end; see [`Meter::forget`](crate::Meter::forget)
//! for what forgetting does with held series.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use opentelemetry::KeyValue;

/// A monotonic clock for idle timeouts: the time since some fixed origin.
/// The default reads [`Instant`]; a test drives a
/// [`ManualClock`](https://docs.rs/nemo-lens/latest/nemo_lens/testing/struct.ManualClock.html)
/// (feature `testing`) instead of sleeping.
pub trait Clock: Send + Sync + 'static {
    /// The time since the clock's origin; never goes back.
    fn now(&self) -> Duration;
}

/// [`Instant`], from when the clock was made.
#[derive(Debug)]
pub(crate) struct Monotonic(Instant);

impl Clock for Monotonic {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

/// How a registry's series expire.
#[derive(Clone)]
pub(crate) struct Expiry {
    /// `None`: series never end by themselves.
    pub(crate) timeout: Option<Duration>,
    pub(crate) clock: Arc<dyn Clock>,
}

impl Expiry {
    /// Series that never end by themselves.
    pub(crate) fn never() -> Self {
        Expiry {
            timeout: None,
            clock: Arc::new(Monotonic(Instant::now())),
        }
    }

    /// Series idle for `timeout` end (`None` or zero: never), timed by
    /// `clock` (the system's monotonic clock when `None`).
    pub(crate) fn new(timeout: Option<Duration>, clock: Option<Arc<dyn Clock>>) -> Self {
        Expiry {
            timeout: timeout.filter(|t| !t.is_zero()),
            clock: clock.unwrap_or_else(|| Arc::new(Monotonic(Instant::now()))),
        }
    }

    pub(crate) fn now(&self) -> Duration {
        self.clock.now()
    }
}

impl fmt::Debug for Expiry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Expiry")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// What [`Meter::forget`](crate::Meter::forget) removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Forgotten {
    /// Series removed: gone from every exporter from the next collection.
    pub series: usize,
    /// Series carrying the value that a bound handle of the application
    /// still holds, left in place: they end when the handle is dropped and
    /// they have been idle for the timeout.
    pub held: usize,
}

impl std::ops::AddAssign for Forgotten {
    fn add_assign(&mut self, other: Self) {
        self.series += other.series;
        self.held += other.held;
    }
}

/// Something besides the registry that holds series: a set's cache of bound
/// handles, the metrics bridge's handles. A sweep asks it to let go of what
/// it has not used for `timeout` before the registry's series are swept, so
/// the series it held can end in the same sweep.
pub trait Holder: Send + Sync {
    /// Lets go of what has gone unused for `timeout` as of `now` (by the
    /// registry's clock); `timeout` is `None` when the registry's series
    /// never end by themselves (a holder may have a timeout of its own).
    fn sweep(&self, now: Duration, timeout: Option<Duration>);
    /// Lets go of everything carrying `attribute`.
    fn forget(&self, attribute: &KeyValue);
}

thread_local! {
    static PINNING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with every series it makes or records into pinned: never idle
/// (what `start_at_zero` records).
#[doc(hidden)]
pub fn pinned<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            PINNING.with(|p| p.set(self.0));
        }
    }
    let _reset = Reset(PINNING.with(|p| p.replace(true)));
    f()
}

/// Whether the current thread is inside [`pinned`].
#[inline]
pub(crate) fn pinning() -> bool {
    PINNING.with(Cell::get)
}
