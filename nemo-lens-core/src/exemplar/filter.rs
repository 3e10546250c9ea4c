//! Which records leave an exemplar.

use std::fmt;
use std::str::FromStr;

/// The environment variable that chooses the [`ExemplarFilter`], as the
/// OpenTelemetry SDKs read it.
pub const OTEL_METRICS_EXEMPLAR_FILTER: &str = "OTEL_METRICS_EXEMPLAR_FILTER";

/// Which records leave an exemplar (`OTEL_METRICS_EXEMPLAR_FILTER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExemplarFilter {
    /// Every record (`always_on`), with its span when one is current.
    AlwaysOn,
    /// None (`always_off`): histograms keep no exemplar storage and a record
    /// costs what it costs without exemplars.
    AlwaysOff,
    /// Records made while a sampled span is current (`trace_based`, the
    /// default, as the specification says).
    #[default]
    TraceBased,
}

impl ExemplarFilter {
    /// The name `OTEL_METRICS_EXEMPLAR_FILTER` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            ExemplarFilter::AlwaysOn => "always_on",
            ExemplarFilter::AlwaysOff => "always_off",
            ExemplarFilter::TraceBased => "trace_based",
        }
    }

    /// Whether histograms keep exemplars at all.
    pub fn is_on(self) -> bool {
        self != ExemplarFilter::AlwaysOff
    }
}

impl fmt::Display for ExemplarFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value of `OTEL_METRICS_EXEMPLAR_FILTER` that is none of the three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{OTEL_METRICS_EXEMPLAR_FILTER}={0:?} is not an exemplar filter: use trace_based (the default), always_on or always_off")]
pub struct UnknownExemplarFilter(pub String);

impl FromStr for ExemplarFilter {
    type Err = UnknownExemplarFilter;

    /// The three names, without case, surrounding blanks ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "always_on" => Ok(ExemplarFilter::AlwaysOn),
            "always_off" => Ok(ExemplarFilter::AlwaysOff),
            "trace_based" => Ok(ExemplarFilter::TraceBased),
            _ => Err(UnknownExemplarFilter(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_others_are_refused_by_name() {
        assert_eq!("trace_based".parse(), Ok(ExemplarFilter::TraceBased));
        assert_eq!(" Always_On ".parse(), Ok(ExemplarFilter::AlwaysOn));
        assert_eq!("always_off".parse(), Ok(ExemplarFilter::AlwaysOff));
        let error = "sometimes".parse::<ExemplarFilter>().unwrap_err();
        assert!(error
            .to_string()
            .contains("OTEL_METRICS_EXEMPLAR_FILTER=\"sometimes\""));
        assert_eq!(ExemplarFilter::default(), ExemplarFilter::TraceBased);
    }
}
