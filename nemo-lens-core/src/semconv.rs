//! Which semantic-convention names a meter records: the standard
//! `OTEL_SEMCONV_STABILITY_OPT_IN` switch, and the gate each instrument
//! declares against it.
//!
//! OpenTelemetry instrumentations move between versions of a convention the
//! same way: by default they keep the names they shipped with; a value in
//! `OTEL_SEMCONV_STABILITY_OPT_IN` (comma-separated) switches an area to its
//! newer names, and the value with `/dup` appended records both, so
//! dashboards can migrate while old and new series overlap (as `http/dup`
//! and `database/dup` do). nemo-lens reads `gen_ai_latest_experimental`
//! ([`GEN_AI_LATEST_EXPERIMENTAL`]); a set declared with the derive may gate
//! its own instruments on any value. Values nobody declared change nothing,
//! since several libraries read the same variable.
//!
//! `gen_ai_latest_experimental/dup` is nemo-lens's own: OpenTelemetry's
//! Python instrumentations define no `/dup` for GenAI and ignore the value,
//! so a Python process given it keeps the old names, which the Rust side
//! records too. Parsing follows theirs otherwise: entries trimmed, matched
//! exactly (case-sensitive), `X/dup` winning over `X`.

use std::fmt;
use std::sync::Arc;

/// The opt-in value of the GenAI conventions' current draft
/// (semantic-conventions-genai): its token metrics instead of
/// `gen_ai.client.token.usage`.
pub const GEN_AI_LATEST_EXPERIMENTAL: &str = "gen_ai_latest_experimental";

/// The variable OpenTelemetry libraries read the opt-in from.
pub const SEMCONV_STABILITY_OPT_IN: &str = "OTEL_SEMCONV_STABILITY_OPT_IN";

/// The values of `OTEL_SEMCONV_STABILITY_OPT_IN` a meter follows.
///
/// ```
/// use nemo_lens::SemconvOptIn;
///
/// let opt_in = SemconvOptIn::parse("http, gen_ai_latest_experimental/dup");
/// assert!(opt_in.records_new("gen_ai_latest_experimental"));
/// assert!(opt_in.records_old("gen_ai_latest_experimental")); // `/dup`: both
/// assert!(!SemconvOptIn::none().records_new("gen_ai_latest_experimental"));
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct SemconvOptIn {
    /// `(value, dup)`, without repeats; `dup` wins when both forms are given.
    values: Arc<[(Box<str>, bool)]>,
}

impl SemconvOptIn {
    /// No opt-in: every area keeps its default names.
    pub fn none() -> Self {
        Self::default()
    }

    /// Reads a comma-separated value of `OTEL_SEMCONV_STABILITY_OPT_IN`.
    ///
    /// Never fails: entries are trimmed, empty ones skipped, and values no
    /// instrument declares are kept but change nothing (other libraries
    /// read the same variable). `X/dup` wins over `X`.
    pub fn parse(value: &str) -> Self {
        value
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .fold(Self::none(), |opt_in, entry| opt_in.with(entry))
    }

    /// Adds one value: `gen_ai_latest_experimental` for the new names only,
    /// `gen_ai_latest_experimental/dup` for both.
    #[must_use]
    pub fn with(self, entry: &str) -> Self {
        let entry = entry.trim();
        let (value, dup) = match entry.strip_suffix("/dup") {
            Some(value) => (value, true),
            None => (entry, false),
        };
        let mut values = self.values.to_vec();
        match values.iter_mut().find(|(known, _)| &**known == value) {
            Some((_, known_dup)) => *known_dup |= dup,
            None if !value.is_empty() => values.push((value.into(), dup)),
            None => {}
        }
        SemconvOptIn {
            values: values.into(),
        }
    }

    /// Whether instruments gated on `value` ([`SemconvGate::OptIn`]) are
    /// recorded: `value` or `value/dup` was given.
    pub fn records_new(&self, value: &str) -> bool {
        self.find(value).is_some()
    }

    /// Whether instruments that `value` replaces ([`SemconvGate::UntilOptIn`])
    /// are recorded: `value` was not given, or was given as `value/dup`.
    pub fn records_old(&self, value: &str) -> bool {
        self.find(value).is_none_or(|dup| dup)
    }

    /// Whether nothing was opted in to.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    fn find(&self, value: &str) -> Option<bool> {
        self.values
            .iter()
            .find(|(known, _)| &**known == value)
            .map(|(_, dup)| *dup)
    }
}

impl fmt::Display for SemconvOptIn {
    /// The canonical variable value, e.g. `http,gen_ai_latest_experimental/dup`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (value, dup)) in self.values.iter().enumerate() {
            let comma = if i == 0 { "" } else { "," };
            let dup = if *dup { "/dup" } else { "" };
            write!(f, "{comma}{value}{dup}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for SemconvOptIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SemconvOptIn({:?})", self.to_string())
    }
}

/// When an instrument is recorded, by the opt-in of the meter it records on.
///
/// Declared on an instrument with the derive's `opt_in = ".."` and
/// `until_opt_in = ".."` keys; visible in [`Descriptor::semconv`](crate::Descriptor::semconv).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SemconvGate {
    /// Whatever the opt-in.
    Always,
    /// Newer conventions: only when the meter opts in to this value (alone
    /// or with `/dup`).
    OptIn(&'static str),
    /// Conventions this value replaces: by default, and with `/dup`; not
    /// when the meter opts in to the value alone.
    UntilOptIn(&'static str),
}

impl SemconvGate {
    /// Whether a meter with `opt_in` records the instrument.
    #[inline]
    pub fn is_open(self, opt_in: &SemconvOptIn) -> bool {
        match self {
            SemconvGate::Always => true,
            SemconvGate::OptIn(value) => opt_in.records_new(value),
            SemconvGate::UntilOptIn(value) => opt_in.records_old(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GEN_AI: &str = GEN_AI_LATEST_EXPERIMENTAL;

    #[test]
    fn unset_records_the_default_names_only() {
        let none = SemconvOptIn::parse("");
        assert!(none.is_empty());
        assert!(SemconvGate::UntilOptIn(GEN_AI).is_open(&none));
        assert!(!SemconvGate::OptIn(GEN_AI).is_open(&none));
        assert!(SemconvGate::Always.is_open(&none));
    }

    #[test]
    fn the_value_alone_switches_and_dup_records_both() {
        let latest = SemconvOptIn::parse(GEN_AI);
        assert!(latest.records_new(GEN_AI) && !latest.records_old(GEN_AI));
        let dup = SemconvOptIn::parse("gen_ai_latest_experimental/dup");
        assert!(dup.records_new(GEN_AI) && dup.records_old(GEN_AI));
    }

    #[test]
    fn other_libraries_values_are_ignored_and_entries_trimmed() {
        let mixed = SemconvOptIn::parse(" http/dup ,, database , gen_ai_latest_experimental ");
        assert!(mixed.records_new(GEN_AI) && !mixed.records_old(GEN_AI));
        assert!(mixed.records_new("http") && mixed.records_old("http"));
        assert_eq!(
            mixed.to_string(),
            "http/dup,database,gen_ai_latest_experimental"
        );
        // A value no instrument declares changes nothing for GenAI.
        let http = SemconvOptIn::parse("http");
        assert!(!http.records_new(GEN_AI) && http.records_old(GEN_AI));
    }

    #[test]
    fn dup_wins_over_the_plain_value_in_either_order() {
        for value in [
            "gen_ai_latest_experimental,gen_ai_latest_experimental/dup",
            "gen_ai_latest_experimental/dup,gen_ai_latest_experimental",
        ] {
            let opt_in = SemconvOptIn::parse(value);
            assert!(opt_in.records_new(GEN_AI) && opt_in.records_old(GEN_AI));
            assert_eq!(opt_in.to_string(), "gen_ai_latest_experimental/dup");
        }
    }
}
