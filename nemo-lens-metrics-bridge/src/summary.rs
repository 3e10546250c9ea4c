//! Histograms rendered as Prometheus summaries, for dashboards that query
//! `{quantile="0.99"}`: `metrics-exporter-prometheus`'s quantiles over its
//! rolling window (by default 0, 0.5, 0.9, 0.95, 0.99, 0.999 and 1 over
//! three buckets of 20 s), with a cumulative sum and count. The rolling
//! window follows that crate's `RollingSummary` (MIT), on the same sketch
//! (`metrics_util::storage::Summary`), so the figures agree with it.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use metrics_util::storage::Summary;
use nemo_lens_core::__internal::bridge::{SummaryFamily, SummarySeries as ExportedSeries};

/// How summaries aggregate.
#[derive(Debug, Clone)]
pub(crate) struct SummaryConfig {
    pub(crate) quantiles: Vec<f64>,
    pub(crate) bucket_duration: Duration,
    pub(crate) bucket_count: NonZeroU32,
}

impl Default for SummaryConfig {
    fn default() -> Self {
        SummaryConfig {
            quantiles: vec![0.0, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0],
            bucket_duration: Duration::from_secs(20),
            // Three is not zero.
            bucket_count: NonZeroU32::MIN.saturating_add(2),
        }
    }
}

struct Bucket {
    begin: Instant,
    summary: Summary,
}

/// The values of the last `bucket_count * bucket_duration`, newest bucket
/// first, aligned on the first bucket's start.
struct Rolling {
    buckets: Vec<Bucket>,
    max_buckets: usize,
    bucket_duration: Duration,
    window: Duration,
    count: u64,
    sum: f64,
}

impl Rolling {
    fn new(config: &SummaryConfig) -> Self {
        Rolling {
            // Grown as values come: a count of `u32::MAX` must not reserve
            // that many buckets up front.
            buckets: Vec::with_capacity(config.bucket_count.get().min(4) as usize),
            max_buckets: config.bucket_count.get() as usize,
            bucket_duration: config.bucket_duration,
            // The builder refuses a window past `Duration::MAX`; a bucket
            // count set after the duration can still make one, which is as
            // good as unbounded.
            window: config
                .bucket_duration
                .checked_mul(config.bucket_count.get())
                .unwrap_or(Duration::MAX),
            count: 0,
            sum: 0.0,
        }
    }

    fn add(&mut self, value: f64, now: Instant) {
        self.count += 1;
        self.sum += value;
        for bucket in &mut self.buckets {
            // `None`: the bucket ends past what an `Instant` can hold, so
            // never.
            let end = bucket.begin.checked_add(self.bucket_duration);
            if end.is_some_and(|end| now > end) {
                break;
            }
            if now >= bucket.begin && end.is_none_or(|end| now < end) {
                bucket.summary.add(value);
                return;
            }
        }
        if let Some(cutoff) = now.checked_sub(self.window) {
            self.buckets.retain(|b| b.begin > cutoff);
        }
        let mut summary = Summary::with_defaults();
        summary.add(value);
        let Some(first) = self.buckets.first() else {
            self.buckets.push(Bucket {
                begin: now,
                summary,
            });
            return;
        };
        if now > first.begin {
            // The bucket `now` falls in, counted from the first one's start.
            let steps =
                now.duration_since(first.begin).as_nanos() / self.bucket_duration.as_nanos().max(1);
            // Within the window the steps fit a u32 (the window is at most
            // `u32::MAX` buckets); past it, or on an `Instant` overflow,
            // alignment cannot be kept and the bucket starts now.
            let begin = u32::try_from(steps)
                .ok()
                .and_then(|steps| self.bucket_duration.checked_mul(steps))
                .and_then(|offset| first.begin.checked_add(offset))
                .unwrap_or(now);
            self.buckets.truncate(self.max_buckets.saturating_sub(1));
            self.buckets.insert(0, Bucket { begin, summary });
        }
    }

    fn snapshot(&self, now: Instant) -> Summary {
        let cutoff = now.checked_sub(self.window);
        let mut merged = Summary::with_defaults();
        for bucket in &self.buckets {
            if cutoff.is_none_or(|cutoff| bucket.begin > cutoff) {
                // Every sketch here has the default configuration, which
                // is all a merge checks.
                let _ = merged.merge(&bucket.summary);
            }
        }
        merged
    }
}

/// One summarised series.
pub(crate) struct SummarySeries {
    labels: Vec<(String, String)>,
    rolling: Mutex<Rolling>,
}

impl SummarySeries {
    pub(crate) fn record(&self, value: f64) {
        // NaN and infinities would poison the sum, as the SDK ignores them.
        if !value.is_finite() {
            return;
        }
        self.rolling
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(value, Instant::now());
    }
}

/// Every summarised series of a recorder, by name.
#[derive(Default)]
pub(crate) struct Summaries {
    config: SummaryConfig,
    by_name: Mutex<HashMap<String, Vec<Arc<SummarySeries>>>>,
}

impl Summaries {
    pub(crate) fn new(config: SummaryConfig) -> Self {
        Summaries {
            config,
            by_name: Mutex::default(),
        }
    }

    /// A series with `labels` (sanitized names), exported once
    /// [`add`](Self::add)ed.
    pub(crate) fn new_series(&self, mut labels: Vec<(String, String)>) -> Arc<SummarySeries> {
        labels.sort();
        Arc::new(SummarySeries {
            labels,
            rolling: Mutex::new(Rolling::new(&self.config)),
        })
    }

    /// Notes `name` as summarised before any of its series exists: the
    /// exposition then shows its histogram as a summary, never as a
    /// histogram.
    pub(crate) fn declare(&self, name: &str) {
        self.by_name
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_owned())
            .or_default();
    }

    /// Stops exporting `series` under `name`.
    pub(crate) fn remove(&self, name: &str, series: &Arc<SummarySeries>) {
        if let Some(all) = self
            .by_name
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(name)
        {
            all.retain(|s| !Arc::ptr_eq(s, series));
        }
    }

    /// Exports `series` under `name`.
    pub(crate) fn add(&self, name: &str, series: Arc<SummarySeries>) {
        self.by_name
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_owned())
            .or_default()
            .push(series);
    }
}

impl Summaries {
    /// The summary families now.
    pub(crate) fn families(&self) -> Vec<SummaryFamily> {
        let now = Instant::now();
        let by_name = self.by_name.lock().unwrap_or_else(PoisonError::into_inner);
        by_name
            .iter()
            .map(|(name, series)| SummaryFamily {
                name: name.clone(),
                series: series
                    .iter()
                    .map(|s| {
                        let rolling = s.rolling.lock().unwrap_or_else(PoisonError::into_inner);
                        let snapshot = rolling.snapshot(now);
                        ExportedSeries {
                            labels: s.labels.clone(),
                            quantiles: self
                                .config
                                .quantiles
                                .iter()
                                .map(|q| (*q, snapshot.quantile(*q).unwrap_or(0.0)))
                                .collect(),
                            sum: rolling.sum,
                            count: rolling.count,
                        }
                    })
                    .collect(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_leave_the_window() {
        let config = SummaryConfig {
            bucket_duration: Duration::from_secs(1),
            ..SummaryConfig::default()
        };
        let mut rolling = Rolling::new(&config);
        let start = Instant::now();
        rolling.add(100.0, start);
        rolling.add(1.0, start + Duration::from_millis(1500));
        assert_eq!(rolling.snapshot(start + Duration::from_secs(2)).count(), 2);
        // Past three one-second buckets the first value is gone; the count
        // and sum stay cumulative.
        let late = rolling.snapshot(start + Duration::from_millis(3500));
        assert_eq!(late.count(), 1);
        assert_eq!(late.quantile(1.0).map(|v| v.round()), Some(1.0));
        assert_eq!((rolling.count, rolling.sum), (2, 101.0));
    }

    #[test]
    fn huge_windows_do_not_overflow() {
        let start = Instant::now();
        for (bucket_duration, bucket_count) in [
            (Duration::MAX, 3),
            (Duration::from_secs(u64::MAX / 2), 3),
            (Duration::from_nanos(1), u32::MAX),
        ] {
            let config = SummaryConfig {
                bucket_duration,
                bucket_count: NonZeroU32::new(bucket_count).unwrap_or(NonZeroU32::MIN),
                ..SummaryConfig::default()
            };
            let mut rolling = Rolling::new(&config);
            rolling.add(1.0, start);
            rolling.add(2.0, start + Duration::from_secs(5));
            let snapshot = rolling.snapshot(start + Duration::from_secs(6));
            assert!(
                snapshot.count() >= 1,
                "{bucket_duration:?} x {bucket_count}"
            );
            assert_eq!(rolling.count, 2);
        }
    }
}
