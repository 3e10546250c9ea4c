//! The rules a group's specs follow, the derive's own (the naming crate's
//! [`rules`](nemo_lens_naming::rules)) plus what only a runtime spec can get
//! wrong.
//! Every problem is collected, so a refused group names all of them at once.

use std::fmt;

use nemo_lens_naming::rules;

use super::spec::{MetricKind, MetricSpec};

/// Which rule a spec breaks: a stable identifier, for tools and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The group has no name.
    GroupName,
    /// The group declares no metric.
    Empty,
    /// A group of that name is registered (and overriding was not asked).
    AlreadyRegistered,
    /// A key is empty.
    Key,
    /// Two specs share a key.
    DuplicateKey,
    /// The instrument name breaks OpenTelemetry's rule.
    Name,
    /// The unit is too long, not ASCII or not UCUM.
    Unit,
    /// The description is missing or empty.
    Description,
    /// A gauge has a duration unit: durations belong on histograms.
    DurationOnGauge,
    /// The name spells its unit, which the Prometheus exporter appends again.
    UnitInName,
    /// `unit_in_name` is set on a name that does not spell its unit.
    UnitInNameNotNeeded,
    /// Buckets on something other than a histogram, or bounds not finite and
    /// strictly increasing.
    Buckets,
    /// An observable kind without a callback, or a callback on a kind
    /// recorded by key.
    Callback,
    /// Two keys name one instrument differently (kind, unit, description or
    /// buckets).
    ConflictingName,
    /// A spec file field is missing, unknown or of the wrong type.
    Field,
    /// A kind Lens does not know.
    Kind,
}

impl Rule {
    /// The identifier, e.g. `duration-on-gauge`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Rule::GroupName => "group-name",
            Rule::Empty => "empty-group",
            Rule::AlreadyRegistered => "already-registered",
            Rule::Key => "key",
            Rule::DuplicateKey => "duplicate-key",
            Rule::Name => "name",
            Rule::Unit => "unit",
            Rule::Description => "description",
            Rule::DurationOnGauge => "duration-on-gauge",
            Rule::UnitInName => "unit-in-name",
            Rule::UnitInNameNotNeeded => "unit-in-name-not-needed",
            Rule::Buckets => "buckets",
            Rule::Callback => "callback",
            Rule::ConflictingName => "conflicting-name",
            Rule::Field => "field",
            Rule::Kind => "kind",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken rule: which key (empty for the group itself), which rule, and
/// a sentence saying what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The offending spec's key; empty when the problem is the group's.
    pub key: String,
    /// The rule broken.
    pub rule: Rule,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// A group refused, with every problem its specs have.
///
/// `Debug` prints the same as `Display`, so `fn main() -> Result<..>` shows
/// the problems rather than a struct.
#[derive(Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The group.
    pub group: String,
    /// Every problem found, in declaration order.
    pub problems: Vec<Problem>,
}

impl SpecError {
    /// Each problem's key and rule, in order: what a tool (or a test) checks.
    pub fn keys_and_rules(&self) -> Vec<(&str, Rule)> {
        self.problems
            .iter()
            .map(|p| (p.key.as_str(), p.rule))
            .collect()
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        write!(
            f,
            "metric group `{}` refused, {count} problem{}:",
            self.group,
            if count == 1 { "" } else { "s" }
        )?;
        for problem in &self.problems {
            if problem.key.is_empty() {
                write!(f, "\n  [{}] {}", problem.rule, problem.message)?;
            } else {
                write!(
                    f,
                    "\n  key `{}` [{}] {}",
                    problem.key, problem.rule, problem.message
                )?;
            }
        }
        Ok(())
    }
}

crate::error_debug::debug_as_sentence!(SpecError);

impl std::error::Error for SpecError {}

/// Collects problems for one group.
#[derive(Default)]
pub(crate) struct Problems(pub(crate) Vec<Problem>);

impl Problems {
    pub(crate) fn push(&mut self, key: &str, rule: Rule, message: impl Into<String>) {
        self.0.push(Problem {
            key: key.to_owned(),
            rule,
            message: message.into(),
        });
    }
}

/// Checks `specs` as group `group`; every problem, or none.
pub fn check_group(group: &str, specs: &[MetricSpec]) -> Result<(), SpecError> {
    let mut problems = Problems::default();
    check_into(&mut problems, group, specs);
    if problems.0.is_empty() {
        Ok(())
    } else {
        Err(SpecError {
            group: group.to_owned(),
            problems: problems.0,
        })
    }
}

pub(crate) fn check_into(problems: &mut Problems, group: &str, specs: &[MetricSpec]) {
    if group.is_empty() {
        problems.push("", Rule::GroupName, "the group name is empty");
    }
    if specs.is_empty() {
        problems.push(
            "",
            Rule::Empty,
            format!("group `{group}` declares no metric"),
        );
    }
    for (index, spec) in specs.iter().enumerate() {
        check_spec(problems, spec);
        let earlier = &specs[..index];
        if !spec.key.is_empty() && earlier.iter().any(|other| other.key == spec.key) {
            problems.push(
                &spec.key,
                Rule::DuplicateKey,
                format!("key `{}` is declared twice in group `{group}`", spec.key),
            );
        }
        if let Some(other) = earlier
            .iter()
            .find(|other| other.name.eq_ignore_ascii_case(&spec.name))
            && let Some(difference) = difference(other, spec)
        {
            problems.push(
                &spec.key,
                Rule::ConflictingName,
                format!(
                    "`{}` is also key `{}`'s instrument, with a different {difference}; one \
                         instrument has one kind, unit, description and buckets",
                    spec.name, other.key
                ),
            );
        }
    }
}

fn difference(a: &MetricSpec, b: &MetricSpec) -> Option<&'static str> {
    if a.kind != b.kind {
        Some("kind")
    } else if a.unit != b.unit {
        Some("unit")
    } else if a.description != b.description {
        Some("description")
    } else if a.buckets != b.buckets {
        Some("buckets")
    } else {
        None
    }
}

fn check_spec(problems: &mut Problems, spec: &MetricSpec) {
    let key = spec.key.as_str();
    if key.is_empty() {
        problems.push(
            key,
            Rule::Key,
            format!("the spec of `{}` has an empty key", spec.name),
        );
    }
    if let Some(problem) = rules::name_problem(&spec.name) {
        problems.push(key, Rule::Name, problem);
    }
    for problem in rules::unit_problems(&spec.unit) {
        problems.push(key, Rule::Unit, problem);
    }
    if spec.description.trim().is_empty() {
        problems.push(
            key,
            Rule::Description,
            format!(
                "`{}` has no description: add one saying what it measures (\"description\" in a \
                 spec file, MetricSpec::description in code); it is exported with the metric",
                spec.name
            ),
        );
    }
    if matches!(spec.kind, MetricKind::Gauge | MetricKind::ObservableGauge)
        && let Some(problem) = rules::duration_on_gauge(&spec.unit)
    {
        problems.push(
            key,
            Rule::DurationOnGauge,
            format!("{problem}; make it \"kind\": \"histogram\""),
        );
    }
    let counter = spec.kind.instrument_kind() == crate::InstrumentKind::Counter;
    match (
        rules::spelled_unit(&spec.name, &spec.unit, counter),
        spec.unit_in_name,
    ) {
        (Some(spelled), false) => problems.push(
            key,
            Rule::UnitInName,
            format!(
                "`{}` already spells its unit `{}`, and the Prometheus exporter appends the unit: \
                 it would be scraped as `{}`. Name it `{}` (scraped as `{}`), or, when the name \
                 must stay as it is on the wire, set \"unit_in_name\": true",
                spec.name, spec.unit, spelled.scraped, spelled.fixed, spelled.fixed_scraped
            ),
        ),
        (None, true) => problems.push(
            key,
            Rule::UnitInNameNotNeeded,
            format!(
                "\"unit_in_name\" is not needed: `{}` does not spell its unit, it is scraped as \
                 `{}`; remove it",
                spec.name,
                rules::prometheus_family(&spec.name, &spec.unit, counter)
            ),
        ),
        _ => {}
    }
    if let Some(bounds) = &spec.buckets {
        if spec.kind != MetricKind::Histogram {
            problems.push(
                key,
                Rule::Buckets,
                format!(
                    "buckets only apply to histograms, and this is a {}; remove them",
                    spec.kind
                ),
            );
        }
        for (_, problem) in rules::bucket_problems(bounds) {
            problems.push(key, Rule::Buckets, problem);
        }
    }
    match (spec.kind.is_observable(), spec.callback.is_some()) {
        (true, false) => problems.push(
            key,
            Rule::Callback,
            format!(
                "{} requires a callback, the only way an observable instrument reports a value: \
                 register it in code with MetricSpec::callback (a spec file cannot hold one)",
                spec.kind
            ),
        ),
        (false, true) => problems.push(
            key,
            Rule::Callback,
            format!(
                "a callback is only used by observable kinds; {} records through record_metrics",
                spec.kind
            ),
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_is_named_with_its_key_and_rule() {
        let specs = [
            MetricSpec::new("step", "rl.step.duration", MetricKind::Gauge)
                .unit("s")
                .description("Step time."),
            MetricSpec::new("gen", "rl.generation.duration_ms", MetricKind::Histogram)
                .unit("ms")
                .description("Generation time.")
                .buckets([2.0, 1.0]),
            MetricSpec::new("gen", "9lives", MetricKind::Counter).description("Lives."),
            MetricSpec::new("mem", "rl.host.memory.used", MetricKind::ObservableGauge)
                .unit("By")
                .description("Host memory in use."),
        ];
        let error = check_group("rl", &specs).unwrap_err();
        assert_eq!(
            error.keys_and_rules(),
            [
                ("step", Rule::DurationOnGauge),
                ("gen", Rule::UnitInName),
                ("gen", Rule::Buckets),
                ("gen", Rule::Name),
                ("gen", Rule::DuplicateKey),
                ("mem", Rule::Callback),
            ]
        );
        let text = error.to_string();
        assert!(
            text.starts_with("metric group `rl` refused, 6 problems:"),
            "{text}"
        );
        assert!(
            text.contains("key `gen` [unit-in-name] `rl.generation.duration_ms` already spells"),
            "{text}"
        );
    }

    #[test]
    fn shared_instruments_must_agree() {
        let tokens = |key, kind| {
            MetricSpec::new(key, "app.tokens", kind)
                .unit("{token}")
                .description("Tokens.")
        };
        let specs = [
            tokens("input", MetricKind::Counter),
            tokens("output", MetricKind::Counter),
            tokens("cached", MetricKind::Gauge),
        ];
        let error = check_group("app", &specs).unwrap_err();
        assert_eq!(error.keys_and_rules(), [("cached", Rule::ConflictingName)]);
    }

    #[test]
    fn a_spec_needs_a_description() {
        let specs = [
            MetricSpec::new("loss", "app.loss", MetricKind::Gauge),
            MetricSpec::new("lr", "app.learning_rate", MetricKind::Gauge).description("  "),
            MetricSpec::new("steps", "app.steps", MetricKind::Counter).description("Steps."),
        ];
        let error = check_group("app", &specs).unwrap_err();
        assert_eq!(
            error.keys_and_rules(),
            [("loss", Rule::Description), ("lr", Rule::Description)]
        );
        let text = error.to_string();
        assert!(
            text.contains("key `loss` [description] `app.loss` has no description: add one"),
            "{text}"
        );
        assert_eq!(format!("{error:?}"), text);
    }
}
