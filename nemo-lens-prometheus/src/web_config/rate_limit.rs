//! `rate_limit`: Go's `rate.Limiter` (one token per interval, at most
//! `burst` saved), asked once per request.

use std::time::{Duration, Instant};

/// A token bucket.
#[derive(Debug)]
pub(crate) struct Bucket {
    every: Duration,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// Full, as Go's limiter starts.
    pub(crate) fn new(every: Duration, burst: u32, now: Instant) -> Self {
        Bucket {
            every,
            burst: f64::from(burst),
            tokens: f64::from(burst),
            at: now,
        }
    }

    /// Whether a request may go now; takes its token if so. With a burst
    /// of 0 nothing may, as in Go.
    pub(crate) fn allow(&mut self, now: Instant) -> bool {
        let earned =
            now.saturating_duration_since(self.at).as_secs_f64() / self.every.as_secs_f64();
        self.tokens = (self.tokens + earned).min(self.burst);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_one_per_interval() {
        let t0 = Instant::now();
        let mut bucket = Bucket::new(Duration::from_secs(1), 2, t0);
        assert!(bucket.allow(t0));
        assert!(bucket.allow(t0));
        assert!(!bucket.allow(t0));
        assert!(!bucket.allow(t0 + Duration::from_millis(500)));
        assert!(bucket.allow(t0 + Duration::from_millis(1000)));
        assert!(!bucket.allow(t0 + Duration::from_millis(1100)));
        let mut none = Bucket::new(Duration::from_secs(1), 0, t0);
        assert!(!none.allow(t0 + Duration::from_secs(5)));
    }
}
