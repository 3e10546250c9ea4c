//! What besides a registry holds its series (sets' caches of bound
//! handles, the metrics bridge), and the harvests that time their use.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use opentelemetry::KeyValue;

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
    /// Notes as used at `now` what has been used since the last harvest or
    /// sweep, without letting go of anything or taking a lock that a
    /// record may hold: what makes "idle for the timeout" precise between
    /// sweeps.
    fn harvest(&self, _now: Duration) {}
    /// [`sweep`](Self::sweep) from a record that found the cardinality
    /// limit reached, so that series idle past their timeout make room:
    /// called with no lock of the registry held, from inside a record.
    /// Nothing by default (a holder whose sweep takes a lock a record may
    /// hold must not).
    fn sweep_for_room(&self, _now: Duration, _timeout: Option<Duration>) {}
}

/// The holders of one registry's series.
#[derive(Default)]
pub(crate) struct Holders {
    list: Mutex<Vec<Weak<dyn Holder>>>,
    /// When they were last harvested, in nanoseconds of the registry's
    /// clock plus one (zero: never).
    harvested: AtomicU64,
}

impl Holders {
    pub(crate) fn add(&self, holder: Weak<dyn Holder>) {
        let mut list = self.list.lock().unwrap_or_else(PoisonError::into_inner);
        list.retain(|h| h.strong_count() > 0);
        list.push(holder);
    }

    pub(crate) fn live(&self) -> Vec<Arc<dyn Holder>> {
        self.list
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Harvests every holder unless one harvest ran less than `every`
    /// ago: the holders are shared by every series map of the registry.
    pub(crate) fn harvest(&self, now: Duration, every: Duration) {
        let nanos = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX - 1) + 1;
        let last = self.harvested.load(Ordering::Relaxed);
        let due = last == 0 || Duration::from_nanos(nanos.saturating_sub(last)) >= every;
        if due
            && self
                .harvested
                .compare_exchange(last, nanos, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            for holder in self.live() {
                holder.harvest(now);
            }
        }
    }
}
