//! Bucket boundaries chosen at setup, overriding what a set declares: an
//! SDK view per instrument name.

use opentelemetry_sdk::metrics::{Aggregation, Instrument, InstrumentKind, Stream};

use super::SetupError;

/// Boundaries that replace those of the histogram named `instrument`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BucketOverride {
    pub instrument: String,
    pub boundaries: Vec<f64>,
}

impl BucketOverride {
    /// Finite and strictly increasing, or an error naming the instrument.
    pub fn validate(&self) -> Result<(), SetupError> {
        let invalid = |reason: String| SetupError::InvalidBoundaries {
            instrument: self.instrument.clone(),
            reason,
        };
        if self.instrument.is_empty() {
            return Err(invalid("the instrument name is empty".to_owned()));
        }
        if let Some(bad) = self.boundaries.iter().find(|b| !b.is_finite()) {
            return Err(invalid(format!("{bad} is not a finite number")));
        }
        if let Some(pair) = self.boundaries.windows(2).find(|w| w[1] <= w[0]) {
            return Err(invalid(format!(
                "bounds must be strictly increasing, but {} follows {}",
                pair[1], pair[0]
            )));
        }
        Ok(())
    }

    /// The view: this instrument's histograms aggregate into the new
    /// boundaries; every other instrument is left alone. Names compare
    /// case-insensitively, as the SDK does.
    pub fn view(self) -> impl Fn(&Instrument) -> Option<Stream> + Send + Sync + 'static {
        move |instrument: &Instrument| {
            let matches = instrument.kind() == InstrumentKind::Histogram
                && instrument.name().eq_ignore_ascii_case(&self.instrument);
            if !matches {
                return None;
            }
            Stream::builder()
                .with_aggregation(Aggregation::ExplicitBucketHistogram {
                    boundaries: self.boundaries.clone(),
                    record_min_max: true,
                })
                .build()
                .ok()
        }
    }
}
