//! Bucket boundaries chosen at setup, overriding what a set declares, and
//! the one view of the provider that applies them with the histogram
//! aggregation.

use opentelemetry_sdk::metrics::{Aggregation, Instrument, InstrumentKind, Stream};

use crate::aggregation::{histogram_sdk_aggregation, HistogramAggregation};

/// Boundaries that replace those of the histogram named `instrument`.
#[derive(Debug, Clone, PartialEq)]
pub struct BucketOverride {
    /// The histogram's OpenTelemetry name.
    pub instrument: String,
    /// Its bucket boundaries.
    pub boundaries: Vec<f64>,
}

impl BucketOverride {
    /// Finite and strictly increasing, or why not (setup names the
    /// instrument in its error).
    pub fn validate(&self) -> Result<(), String> {
        if self.instrument.is_empty() {
            return Err("the instrument name is empty".to_owned());
        }
        if let Some(bad) = self.boundaries.iter().find(|b| !b.is_finite()) {
            return Err(format!("{bad} is not a finite number"));
        }
        if let Some(pair) = self.boundaries.windows(2).find(|w| w[1] <= w[0]) {
            return Err(format!(
                "bounds must be strictly increasing, but {} follows {}",
                pair[1], pair[0]
            ));
        }
        Ok(())
    }

    fn applies_to(&self, instrument: &Instrument) -> bool {
        instrument.kind() == InstrumentKind::Histogram
            && instrument.name().eq_ignore_ascii_case(&self.instrument)
    }
}

/// What setup changes of the streams instruments ask for. One view does it
/// all: the SDK makes a stream per view that matches an instrument, so two
/// views would export a histogram twice.
#[derive(Debug, Clone, Default)]
pub struct Streams {
    /// Boundaries chosen at setup, replacing declared ones.
    pub buckets: Vec<BucketOverride>,
    /// How histograms aggregate unless their declaration pinned it.
    pub histogram_aggregation: HistogramAggregation,
    /// Series per instrument before the SDK merges the rest into its
    /// overflow series; `None` for the SDK's 2000.
    pub cardinality_limit: Option<usize>,
}

impl Streams {
    /// The view: a histogram with overridden boundaries aggregates into
    /// them; any other one as its declaration pinned or as the default
    /// aggregation says; every other instrument is left alone.
    pub fn view(self) -> impl Fn(&Instrument) -> Option<Stream> + Send + Sync + 'static {
        move |instrument: &Instrument| {
            let overridden = self.buckets.iter().find(|b| b.applies_to(instrument));
            let aggregation = match overridden {
                Some(buckets) => Some(Aggregation::ExplicitBucketHistogram {
                    boundaries: buckets.boundaries.clone(),
                    record_min_max: true,
                }),
                None => histogram_sdk_aggregation(instrument, self.histogram_aggregation),
            };
            if aggregation.is_none() && self.cardinality_limit.is_none() {
                return None;
            }
            let mut stream = Stream::builder();
            if let Some(aggregation) = aggregation {
                stream = stream.with_aggregation(aggregation);
            }
            if let Some(limit) = self.cardinality_limit {
                stream = stream.with_cardinality_limit(limit);
            }
            stream.build().ok()
        }
    }
}
