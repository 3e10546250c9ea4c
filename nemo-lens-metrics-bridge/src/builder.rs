//! `MetricsBridge`: the builder, named after
//! `metrics_exporter_prometheus::PrometheusBuilder`.

use std::num::NonZeroU32;
use std::time::Duration;

use metrics_util::MetricKindMask;
use nemo_lens_telemetry::TelemetryHandle;

use super::error::BridgeError;
use super::matcher::{BucketRules, Matcher};
use super::names::sanitize_label_key;
use super::recorder::{BridgeRecorder, Settings};
use super::summary::SummaryConfig;

/// Builds a [`BridgeRecorder`]: replace
/// `metrics_exporter_prometheus::PrometheusBuilder::new()` with
/// `MetricsBridge::new()` and `install()` with `install(&telemetry)`.
#[derive(Debug, Clone)]
pub struct MetricsBridge {
    buckets: BucketRules,
    global_labels: Vec<(String, String)>,
    idle_mask: MetricKindMask,
    idle_timeout: Option<Duration>,
    summary_matchers: Vec<Matcher>,
    summary_config: SummaryConfig,
}

impl Default for MetricsBridge {
    fn default() -> Self {
        Self::new()
    }
}

impl MetricsBridge {
    /// A bridge with no matchers (every histogram exponential: native on a
    /// protobuf scrape, powers of two in the text format), no global
    /// labels and no expiry.
    pub fn new() -> Self {
        MetricsBridge {
            buckets: BucketRules::default(),
            global_labels: Vec::new(),
            idle_mask: MetricKindMask::NONE,
            idle_timeout: None,
            summary_matchers: Vec::new(),
            summary_config: SummaryConfig::default(),
        }
    }

    /// Explicit bucket boundaries for every histogram no matcher selects.
    /// Fails on boundaries that are empty, not finite or not strictly
    /// increasing.
    pub fn set_buckets(mut self, values: &[f64]) -> Result<Self, BridgeError> {
        self.buckets.set_default(values)?;
        Ok(self)
    }

    /// Explicit bucket boundaries, exactly `values`, for the histograms
    /// `matcher` selects (a `Full` matcher wins over a `Prefix` one, which
    /// wins over a `Suffix` one). Fails on boundaries that are empty, not
    /// finite or not strictly increasing.
    pub fn set_buckets_for_metric(
        mut self,
        matcher: Matcher,
        values: &[f64],
    ) -> Result<Self, BridgeError> {
        self.buckets.set_for(matcher, values)?;
        Ok(self)
    }

    /// A label on every series; a series' own label of the same name wins.
    /// The same key again replaces the value.
    #[must_use]
    pub fn add_global_label<K, V>(mut self, key: K, value: V) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        let key = sanitize_label_key(&key.into());
        let value = value.into();
        match self.global_labels.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = value,
            None => self.global_labels.push((key, value)),
        }
        self
    }

    /// Stops exporting series of the kinds in `mask` (counters, gauges,
    /// histograms and their summaries) once they go `timeout` without an
    /// update, unless the application still holds a handle to the series
    /// (a held series never expires); their memory is freed. An expired
    /// series that is recorded again starts over. Kinds outside `mask`
    /// follow `NEMO_LENS_SERIES_IDLE_TIMEOUT` (never, unset). Histograms
    /// expire only on a meter with owned series (not with a reader or
    /// exporter of your own), at the collections of its exporters.
    #[must_use]
    pub fn idle_timeout(mut self, mask: MetricKindMask, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self.idle_mask = if timeout.is_none() {
            MetricKindMask::NONE
        } else {
            mask
        };
        self
    }

    /// Accepted so a `PrometheusBuilder` chain (smg's, vllm-router's)
    /// compiles unchanged, and ignored: the bridge has nothing to drain
    /// between scrapes (counters and gauges are read in place, histograms
    /// aggregate as they record), so it runs no upkeep.
    #[must_use]
    pub fn upkeep_timeout(self, _timeout: Duration) -> Self {
        self
    }

    /// Renders the histograms `matcher` selects, and no bucket matcher
    /// does, as Prometheus summaries (the quantiles of
    /// [`set_quantiles`](Self::set_quantiles) over the rolling window,
    /// cumulative `_sum` and `_count`), as `metrics-exporter-prometheus`
    /// renders every unmatched histogram: for dashboards that query
    /// `{quantile="0.99"}`. OTLP carries them as exponential histograms.
    #[must_use]
    pub fn set_summary_for_metric(mut self, matcher: Matcher) -> Self {
        let matcher = matcher.sanitized();
        if !self.summary_matchers.contains(&matcher) {
            self.summary_matchers.push(matcher);
        }
        self
    }

    /// The quantiles summaries report, each clamped to `0..=1`; by default
    /// 0, 0.5, 0.9, 0.95, 0.99, 0.999 and 1. Fails when `quantiles` is
    /// empty or one is NaN.
    pub fn set_quantiles(mut self, quantiles: &[f64]) -> Result<Self, BridgeError> {
        if quantiles.is_empty() {
            return Err(BridgeError::InvalidSummary {
                reason: "set_quantiles: no quantiles were given".to_owned(),
            });
        }
        // `clamp` keeps NaN, which would be a `quantile="NaN"` series.
        if let Some(position) = quantiles.iter().position(|q| q.is_nan()) {
            return Err(BridgeError::InvalidSummary {
                reason: format!("set_quantiles: quantile {position} is NaN"),
            });
        }
        self.summary_config.quantiles = quantiles.iter().map(|q| q.clamp(0.0, 1.0)).collect();
        Ok(self)
    }

    /// How long each bucket of a summary's rolling window lasts (20 s by
    /// default). Fails on zero, and on a window (this times the bucket
    /// count) longer than a `Duration` holds.
    pub fn set_bucket_duration(mut self, value: Duration) -> Result<Self, BridgeError> {
        if value.is_zero() {
            return Err(BridgeError::InvalidSummary {
                reason: "set_bucket_duration: the bucket duration is zero".to_owned(),
            });
        }
        let count = self.summary_config.bucket_count;
        if value.checked_mul(count.get()).is_none() {
            return Err(BridgeError::InvalidSummary {
                reason: format!(
                    "set_bucket_duration({value:?}): the window, {count} buckets of it, is \
                     longer than a Duration holds"
                ),
            });
        }
        self.summary_config.bucket_duration = value;
        Ok(self)
    }

    /// How many buckets a summary's rolling window has (3 by default: the
    /// window is 60 s). A window longer than a `Duration` holds is
    /// unbounded.
    #[must_use]
    pub fn set_bucket_count(mut self, count: NonZeroU32) -> Self {
        self.summary_config.bucket_count = count;
        self
    }

    /// The recorder, not installed: for `metrics::with_local_recorder`, or
    /// beside another recorder with `metrics_util::layers::FanoutBuilder`.
    /// On a `telemetry` that records nothing, every handle is a no-op.
    pub fn build(self, telemetry: &TelemetryHandle) -> BridgeRecorder {
        BridgeRecorder::new(
            telemetry,
            Settings {
                buckets: self.buckets,
                summary_matchers: self.summary_matchers,
                summary_config: self.summary_config,
                global_labels: self.global_labels,
                idle_mask: self.idle_mask,
                idle_timeout: self.idle_timeout,
            },
        )
    }

    /// Builds the recorder and installs it as the `metrics` 0.24 global
    /// recorder; fails when the process already has one.
    pub fn install(self, telemetry: &TelemetryHandle) -> Result<(), BridgeError> {
        metrics::set_global_recorder(self.build(telemetry)).map_err(|_| {
            BridgeError::RecorderAlreadySet {
                metrics_version: "0.24",
            }
        })
    }
}
