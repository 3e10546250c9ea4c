//! Which bucket boundaries a histogram gets: `metrics-exporter-prometheus`'s
//! matchers, with its precedence.

use super::error::BridgeError;
use super::names::sanitize_metric_name;

/// Selects histograms by name for
/// [`set_buckets_for_metric`](super::MetricsBridge::set_buckets_for_metric),
/// as in `metrics-exporter-prometheus`: when several match, a `Full` one
/// wins over a `Prefix` one, which wins over a `Suffix` one (then the
/// lexically smaller string).
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub enum Matcher {
    /// The whole metric name.
    Full(String),
    /// The start of the metric name.
    Prefix(String),
    /// The end of the metric name.
    Suffix(String),
}

impl Matcher {
    /// Whether `name` (a Prometheus metric name) is selected.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Matcher::Full(full) => name == full,
            Matcher::Prefix(prefix) => name.starts_with(prefix.as_str()),
            Matcher::Suffix(suffix) => name.ends_with(suffix.as_str()),
        }
    }

    /// The matcher of sanitized names, as the exporter compares them.
    pub(crate) fn sanitized(self) -> Matcher {
        match self {
            Matcher::Full(s) => Matcher::Full(sanitize_metric_name(&s)),
            Matcher::Prefix(s) => Matcher::Prefix(sanitize_metric_name(&s)),
            Matcher::Suffix(s) => Matcher::Suffix(sanitize_metric_name(&s)),
        }
    }
}

/// Boundaries per matcher, sorted by precedence, and the default.
#[derive(Debug, Clone, Default)]
pub(crate) struct BucketRules {
    default: Option<Vec<f64>>,
    by_matcher: Vec<(Matcher, Vec<f64>)>,
}

impl BucketRules {
    pub(crate) fn set_default(&mut self, bounds: &[f64]) -> Result<(), BridgeError> {
        self.default = Some(checked(bounds, None)?);
        Ok(())
    }

    pub(crate) fn set_for(&mut self, matcher: Matcher, bounds: &[f64]) -> Result<(), BridgeError> {
        let bounds = checked(bounds, Some(&matcher))?;
        let matcher = matcher.sanitized();
        match self.by_matcher.iter_mut().find(|(m, _)| *m == matcher) {
            Some((_, known)) => *known = bounds,
            None => self.by_matcher.push((matcher, bounds)),
        }
        self.by_matcher.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(())
    }

    /// The boundaries of the histogram `name`; `None` for an exponential one.
    pub(crate) fn for_name(&self, name: &str) -> Option<&[f64]> {
        self.matched(name).or(self.default.as_deref())
    }

    /// The boundaries a matcher gives the histogram `name`.
    pub(crate) fn matched(&self, name: &str) -> Option<&[f64]> {
        self.by_matcher
            .iter()
            .find(|(m, _)| m.matches(name))
            .map(|(_, b)| b.as_slice())
    }
}

/// Non-empty, finite, strictly increasing boundaries, or an error saying
/// which rule is broken.
fn checked(bounds: &[f64], matcher: Option<&Matcher>) -> Result<Vec<f64>, BridgeError> {
    let invalid = |reason: String| BridgeError::InvalidBuckets {
        matcher: matcher.cloned(),
        reason,
    };
    if bounds.is_empty() {
        return Err(invalid("no bucket boundaries were given".to_owned()));
    }
    if let Some(bad) = bounds.iter().find(|b| !b.is_finite()) {
        return Err(invalid(format!("{bad} is not a finite number")));
    }
    if let Some(pair) = bounds.windows(2).find(|w| w[1] <= w[0]) {
        return Err(invalid(format!(
            "boundaries must be strictly increasing, but {} follows {}",
            pair[1], pair[0]
        )));
    }
    Ok(bounds.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_beats_prefix_beats_suffix() {
        let mut rules = BucketRules::default();
        rules
            .set_for(Matcher::Suffix("_seconds".into()), &[1.0])
            .unwrap();
        rules
            .set_for(Matcher::Prefix("smg_".into()), &[2.0])
            .unwrap();
        rules
            .set_for(Matcher::Full("smg_ttft_seconds".into()), &[3.0])
            .unwrap();
        assert_eq!(rules.for_name("smg_ttft_seconds"), Some(&[3.0][..]));
        assert_eq!(rules.for_name("smg_tpot_seconds"), Some(&[2.0][..]));
        assert_eq!(rules.for_name("other_seconds"), Some(&[1.0][..]));
        assert_eq!(rules.for_name("other"), None);
        rules.set_default(&[9.0]).unwrap();
        assert_eq!(rules.for_name("other"), Some(&[9.0][..]));
    }

    #[test]
    fn bad_boundaries_are_refused_with_the_reason() {
        let mut rules = BucketRules::default();
        let err = rules
            .set_for(Matcher::Full("x".into()), &[1.0, 1.0])
            .unwrap_err();
        assert!(err.to_string().contains("1 follows 1"), "{err}");
        assert!(err.to_string().contains("Full(\"x\")"), "{err}");
        assert!(rules.set_default(&[]).is_err());
        assert!(rules.set_default(&[f64::NAN]).is_err());
    }
}
