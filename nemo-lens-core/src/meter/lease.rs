//! Meter handles for guards.
//!
//! A guard holds its meter from `start` to its end. Were that a clone, every
//! request on every core would add to and take from the one reference count
//! of the meter, and that cache line would travel between the cores twice
//! per request (a quarter of a request's time on two cores, measured). A
//! lease counts instead on one of a few handles, picked by the thread, each
//! on cache lines of its own: the shared count moves once per handle.

use std::cell::Cell;
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use super::Meter;
use crate::cells::{stripe_limit, Padded};

/// Threads numbered in the order they first take a lease: consecutive
/// numbers land on different handles, where hashed ones could meet.
fn thread_number() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::thread_local! {
        static NUMBER: Cell<Option<usize>> = const { Cell::new(None) };
    }
    NUMBER
        .try_with(|number| match number.get() {
            Some(n) => n,
            None => {
                let n = NEXT.fetch_add(1, Ordering::Relaxed);
                number.set(Some(n));
                n
            }
        })
        // A thread whose locals are being torn down shares handle zero.
        .unwrap_or(0)
}

/// The handles leases count on, made when a thread first takes a lease.
pub(crate) struct Leases {
    /// A power of two long, as [`stripe_limit`] is.
    slots: Box<[OnceLock<Arc<Padded<Meter>>>]>,
}

impl Leases {
    pub(crate) fn new() -> Self {
        Leases {
            slots: (0..stripe_limit()).map(|_| OnceLock::new()).collect(),
        }
    }

    #[inline]
    pub(crate) fn lease(&self, meter: &Meter) -> MeterLease {
        let slot = &self.slots[thread_number() & (self.slots.len() - 1)];
        let handle = slot.get_or_init(|| {
            // Without the table, so that the table does not own itself.
            Arc::new(Padded(Meter {
                inner: Arc::clone(&meter.inner),
                leases: None,
            }))
        });
        MeterLease(Arc::clone(handle))
    }
}

/// A [`Meter`] held by something that records later (a guard); see
/// [`Meter::lease`]. It keeps the meter and its sets alive as a clone does.
#[derive(Clone)]
pub struct MeterLease(Arc<Padded<Meter>>);

impl MeterLease {
    /// A lease of its own, for a handle without a table of leases.
    pub(super) fn unshared(meter: &Meter) -> Self {
        MeterLease(Arc::new(Padded(meter.clone())))
    }
}

impl Deref for MeterLease {
    type Target = Meter;

    #[inline]
    fn deref(&self) -> &Meter {
        &self.0 .0
    }
}

impl std::fmt::Debug for MeterLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meter() -> Meter {
        let provider = opentelemetry::metrics::noop::NoopMeterProvider::new();
        Meter::new(opentelemetry::metrics::MeterProvider::meter(
            &provider, "test",
        ))
    }

    #[test]
    fn a_lease_shares_the_cache_and_outlives_every_handle() {
        let meter = meter();
        let weak = meter.downgrade();
        let lease = meter.lease();
        assert!(lease.same_cache(&meter));
        assert!(
            meter.lease().same_cache(&lease),
            "a second lease, same cache"
        );
        drop(meter);
        let upgraded = weak.upgrade().expect("the lease keeps the meter alive");
        assert!(upgraded.same_cache(&lease));
        // A handle upgraded after the table is gone still leases.
        assert!(upgraded.lease().same_cache(&lease));
        drop(upgraded);
        drop(lease);
        assert!(weak.upgrade().is_none(), "the last lease frees the meter");
    }

    #[test]
    fn leases_from_many_threads_free_the_meter_with_the_last() {
        let meter = meter();
        let weak = meter.downgrade();
        let leases: Vec<MeterLease> = std::thread::scope(|scope| {
            (0..8)
                .map(|_| scope.spawn(|| meter.lease()))
                .collect::<Vec<_>>()
                .into_iter()
                .map(|handle| handle.join().expect("no panic"))
                .collect()
        });
        drop(meter);
        assert!(weak.upgrade().is_some());
        drop(leases);
        assert!(weak.upgrade().is_none());
    }
}
