//! How histograms aggregate: explicit buckets or base-2 exponential ones,
//! chosen for all of them (`OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION`,
//! [`SetupOptions::histogram_aggregation`](https://docs.rs/nemo-lens/latest/nemo_lens/telemetry/struct.SetupOptions.html#method.histogram_aggregation))
//! or pinned by a declaration (the derive's `aggregation = ".."`).
//!
//! The SDK chooses a stream's aggregation with views on the meter provider,
//! before any instrument exists, while declarations are read as sets are
//! built. So a pinned choice goes into a process-wide table when its set is
//! built, just before its instruments, and the view consults that table.

use std::sync::{PoisonError, RwLock};

use opentelemetry_sdk::metrics::{Aggregation, Instrument, InstrumentKind, Stream};

/// The variable OpenTelemetry SDKs read the default histogram aggregation
/// from.
pub const DEFAULT_HISTOGRAM_AGGREGATION: &str =
    "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION";

/// Buckets of an exponential histogram on each side of zero: the
/// OpenTelemetry default.
pub const EXPONENTIAL_MAX_SIZE: u32 = 160;
/// The finest scale an exponential histogram starts at: the OpenTelemetry
/// default (buckets 2^(2^-20) wide; the SDK lowers the scale as the range
/// of values grows, and a Prometheus scrape reads at most scale 8).
pub const EXPONENTIAL_MAX_SCALE: i8 = 20;

/// How a histogram aggregates its measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HistogramAggregation {
    /// `explicit_bucket_histogram`: the boundaries the declaration gives
    /// (`buckets = [..]`), else the SDK's default ones.
    #[default]
    ExplicitBucket,
    /// `base2_exponential_bucket_histogram`: base-2 exponential buckets
    /// ([`EXPONENTIAL_MAX_SIZE`] per side, scale up to
    /// [`EXPONENTIAL_MAX_SCALE`]) that follow the data, so every quantile is
    /// known to within a few percent whatever its range; served to
    /// Prometheus as native histograms.
    Base2Exponential,
}

impl HistogramAggregation {
    /// Every value, in the order their names are listed.
    pub const ALL: [HistogramAggregation; 2] = [
        HistogramAggregation::ExplicitBucket,
        HistogramAggregation::Base2Exponential,
    ];

    /// The name the OpenTelemetry variable uses.
    pub const fn as_str(self) -> &'static str {
        match self {
            HistogramAggregation::ExplicitBucket => "explicit_bucket_histogram",
            HistogramAggregation::Base2Exponential => "base2_exponential_bucket_histogram",
        }
    }

    /// The aggregation named `value` (case-insensitive, as the
    /// specification reads the variable).
    pub fn from_name(value: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(value.trim()))
    }

    /// The SDK's aggregation; `None` for explicit buckets, which the SDK
    /// applies with the instrument's own boundaries.
    fn sdk(self) -> Option<Aggregation> {
        match self {
            HistogramAggregation::ExplicitBucket => None,
            HistogramAggregation::Base2Exponential => {
                Some(Aggregation::Base2ExponentialHistogram {
                    max_size: EXPONENTIAL_MAX_SIZE,
                    max_scale: EXPONENTIAL_MAX_SCALE,
                    record_min_max: true,
                })
            }
        }
    }
}

impl std::fmt::Display for HistogramAggregation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Instrument names (lower case, as the SDK compares them) and the
/// aggregation their declaration pinned.
static PINNED: RwLock<Vec<(String, HistogramAggregation)>> = RwLock::new(Vec::new());

/// Pins the aggregation of the histogram `name` for every meter provider
/// whose view is [`histogram_view`] (every one `setup_telemetry` builds).
/// The derive calls this for `#[histogram(.., aggregation = "..")]` when
/// it builds the set, before the instrument.
pub fn pin_histogram_aggregation(name: &str, aggregation: HistogramAggregation) {
    let name = name.to_ascii_lowercase();
    let mut pinned = PINNED.write().unwrap_or_else(PoisonError::into_inner);
    match pinned.iter_mut().find(|(known, _)| *known == name) {
        Some((_, known)) => *known = aggregation,
        None => pinned.push((name, aggregation)),
    }
}

/// The aggregation pinned for the histogram `name`, if one was.
pub fn pinned_histogram_aggregation(name: &str) -> Option<HistogramAggregation> {
    let pinned = PINNED.read().unwrap_or_else(PoisonError::into_inner);
    pinned
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name))
        .map(|(_, aggregation)| *aggregation)
}

/// The stream of a histogram aggregated the way its declaration pinned, else
/// as `default` says; `None` (the SDK's own choice) for explicit buckets and
/// for other instruments.
pub(crate) fn histogram_stream(
    instrument: &Instrument,
    default: HistogramAggregation,
) -> Option<Stream> {
    let sdk = histogram_sdk_aggregation(instrument, default)?;
    Stream::builder().with_aggregation(sdk).build().ok()
}

/// The SDK aggregation of a histogram as [`histogram_stream`] chooses it;
/// `None` for the SDK's own (explicit buckets) and for other instruments.
pub(crate) fn histogram_sdk_aggregation(
    instrument: &Instrument,
    default: HistogramAggregation,
) -> Option<Aggregation> {
    if instrument.kind() != InstrumentKind::Histogram {
        return None;
    }
    // A bridged histogram follows its own bridge's matchers, which pin
    // nothing for the instruments of other scopes or bridges.
    if let Some(bridge) = crate::bridge::state(instrument.scope())
        && let Some(aggregation) = bridge.histogram_aggregation(instrument.name())
    {
        return aggregation.sdk();
    }
    pinned_histogram_aggregation(instrument.name())
        .unwrap_or(default)
        .sdk()
}

/// A view for a meter provider of your own: every histogram aggregated as
/// `default` says, unless its declaration pinned an aggregation.
/// `setup_telemetry` installs the same view (with bucket overrides and
/// cardinality limits folded in).
///
/// ```
/// use nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider;
/// use nemo_lens::telemetry::{histogram_view, HistogramAggregation};
///
/// let provider = SdkMeterProvider::builder()
///     .with_view(histogram_view(HistogramAggregation::Base2Exponential))
///     .build();
/// ```
pub fn histogram_view(
    default: HistogramAggregation,
) -> impl Fn(&Instrument) -> Option<Stream> + Send + Sync + 'static {
    move |instrument: &Instrument| histogram_stream(instrument, default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_case_insensitively() {
        assert_eq!(
            HistogramAggregation::from_name("Base2_Exponential_Bucket_Histogram "),
            Some(HistogramAggregation::Base2Exponential)
        );
        assert_eq!(
            HistogramAggregation::from_name("explicit_bucket_histogram"),
            Some(HistogramAggregation::ExplicitBucket)
        );
        assert_eq!(HistogramAggregation::from_name("exponential"), None);
    }

    #[test]
    fn a_pin_is_found_whatever_the_case_and_the_last_one_wins() {
        pin_histogram_aggregation("test.Pinned.Latency", HistogramAggregation::ExplicitBucket);
        pin_histogram_aggregation(
            "test.pinned.latency",
            HistogramAggregation::Base2Exponential,
        );
        assert_eq!(
            pinned_histogram_aggregation("TEST.PINNED.LATENCY"),
            Some(HistogramAggregation::Base2Exponential)
        );
        assert_eq!(pinned_histogram_aggregation("test.unpinned"), None);
    }
}
