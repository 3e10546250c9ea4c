//! When owned series end: after an idle timeout
//! (`NEMO_LENS_SERIES_IDLE_TIMEOUT`, or scoped to attribute keys,
//! instruments and sets by [`SeriesExpiry`]), or when the application
//! forgets an attribute value ([`Meter::forget`](crate::Meter::forget)).
//!
//! A record raises a flag in its cell (one load, and a store once per
//! harvest); a harvest notes the time of each raised flag and lowers it.
//! Each collection harvests and sweeps first, and so does a series map
//! making a series, at most sixteen times per timeout, so a series' last
//! record is known to a sixteenth of the timeout whatever the scrape
//! interval. A series idle for its timeout ends: its look-up entries go,
//! exporters stop seeing it, its memory is freed, and the same attributes
//! recorded again make a new series with a new start time. A new series
//! that finds the cardinality limit reached first ends the series idle
//! past their timeout (their holders let go of them first), so the limit
//! counts live series.
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

mod holders;
mod rules;

pub use holders::Holder;
pub(crate) use holders::Holders;
pub(crate) use rules::Resolved;
pub use rules::SeriesExpiry;

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

/// How a registry's series expire: its rules, its clock and what holds
/// its series besides it.
#[derive(Clone)]
pub(crate) struct Expiry {
    pub(crate) rules: Arc<SeriesExpiry>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) holders: Arc<Holders>,
}

impl Expiry {
    /// Series that never end by themselves.
    pub(crate) fn never() -> Self {
        Self::new(SeriesExpiry::never(), None)
    }

    /// Series end as `rules` say, timed by `clock` (the system's monotonic
    /// clock when `None`).
    pub(crate) fn new(rules: SeriesExpiry, clock: Option<Arc<dyn Clock>>) -> Self {
        Expiry {
            rules: Arc::new(rules),
            clock: clock.unwrap_or_else(|| Arc::new(Monotonic(Instant::now()))),
            holders: Arc::default(),
        }
    }

    pub(crate) fn now(&self) -> Duration {
        self.clock.now()
    }

    /// What the series map of the instrument `name` needs.
    pub(crate) fn for_instrument(&self, name: &str) -> InstrumentExpiry {
        let resolved = self.rules.for_instrument(name);
        InstrumentExpiry {
            shortest: self.rules.shortest(),
            resolved,
            clock: Arc::clone(&self.clock),
            holders: Arc::clone(&self.holders),
        }
    }
}

/// How many times per (shortest) timeout a series map notes which series
/// were recorded, when it makes series: a series ends between one timeout
/// and one timeout plus this share after its last record, whatever the
/// scrape interval.
const HARVESTS_PER_TIMEOUT: u32 = 16;

/// The expiry of one instrument's series.
#[derive(Clone)]
pub(crate) struct InstrumentExpiry {
    pub(crate) resolved: Resolved,
    /// The registry's shortest timeout; `None`: no series of the registry
    /// ends by itself.
    pub(crate) shortest: Option<Duration>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) holders: Arc<Holders>,
}

impl InstrumentExpiry {
    pub(crate) fn now(&self) -> Duration {
        self.clock.now()
    }

    /// How often a series map making series notes which were recorded.
    pub(crate) fn harvest_every(&self) -> Option<Duration> {
        self.shortest.map(|t| t / HARVESTS_PER_TIMEOUT)
    }
}

impl fmt::Debug for Expiry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Expiry")
            .field("rules", &self.rules)
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
