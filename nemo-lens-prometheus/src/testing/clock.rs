//! A clock a test moves by hand, for idle timeouts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nemo_lens_core::owned::expiry::Clock;

/// A clock that stands still until [`advance`](Self::advance)d: a test of
/// idle timeouts lets hours pass in an instant, and runs the same on a
/// loaded machine.
#[derive(Debug, Default)]
pub struct ManualClock {
    nanos: AtomicU64,
}

impl ManualClock {
    /// A clock at its origin.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock on by `by`.
    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(by, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }
}
