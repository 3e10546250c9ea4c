//! `#[derive(AttributeValue)]`: the wire value of every variant under each
//! `rename_all` and `rename`, the generated `ALL`, `as_str`, `Display` and
//! fixed values, and what an `Instruments` set exports for an enum field.

use nemo_lens::instruments::gym::unreleased::{RetryReason, RolloutOutcome};
use nemo_lens::instruments::serving::FinishReason;
use nemo_lens::instruments::TokenModality;
use nemo_lens::opentelemetry::Value;
use nemo_lens::testing::Capture;
use nemo_lens::{AttributeValue, FixedAttributeValue, Instruments, KeyPart};

macro_rules! convention {
    ($name:ident, $rule:literal) => {
        #[derive(AttributeValue, Debug, Clone, Copy, PartialEq)]
        #[attribute_value(rename_all = $rule)]
        enum $name {
            Plain,
            VeryTasty,
            Http2Error,
        }
    };
}

convention!(Lower, "lowercase");
convention!(Upper, "UPPERCASE");
convention!(Pascal, "PascalCase");
convention!(Camel, "camelCase");
convention!(Snake, "snake_case");
convention!(ScreamingSnake, "SCREAMING_SNAKE_CASE");
convention!(Kebab, "kebab-case");
convention!(ScreamingKebab, "SCREAMING-KEBAB-CASE");

/// Without `rename_all`, the variant name as written, as serde does.
#[derive(AttributeValue, Debug, Clone, Copy, PartialEq)]
enum AsWritten {
    Plain,
    VeryTasty,
    Http2Error,
}

fn wire<T: FixedAttributeValue>() -> Vec<&'static str> {
    T::FIXED_VALUES.expect("an enum has fixed values").to_vec()
}

#[test]
fn rename_all_spells_every_variant_as_serde_does() {
    assert_eq!(wire::<Lower>(), ["plain", "verytasty", "http2error"]);
    assert_eq!(wire::<Upper>(), ["PLAIN", "VERYTASTY", "HTTP2ERROR"]);
    assert_eq!(wire::<Pascal>(), ["Plain", "VeryTasty", "Http2Error"]);
    assert_eq!(wire::<Camel>(), ["plain", "veryTasty", "http2Error"]);
    assert_eq!(wire::<Snake>(), ["plain", "very_tasty", "http2_error"]);
    assert_eq!(
        wire::<ScreamingSnake>(),
        ["PLAIN", "VERY_TASTY", "HTTP2_ERROR"]
    );
    assert_eq!(wire::<Kebab>(), ["plain", "very-tasty", "http2-error"]);
    assert_eq!(
        wire::<ScreamingKebab>(),
        ["PLAIN", "VERY-TASTY", "HTTP2-ERROR"]
    );
    assert_eq!(wire::<AsWritten>(), ["Plain", "VeryTasty", "Http2Error"]);
    assert_eq!(Snake::VeryTasty.as_str(), "very_tasty");
    assert_eq!(Kebab::Http2Error.as_str(), "http2-error");
}

/// How a job ended; `rename` wins over `rename_all`.
#[derive(AttributeValue, Debug, Clone, Copy, PartialEq, Eq)]
#[attribute_value(rename_all = "snake_case")]
enum Outcome {
    Success,
    TimedOut,
    #[attribute_value(rename = "error")]
    Failure,
    #[attribute_value(rename = "Not Started")]
    NotStarted,
}

#[test]
fn rename_overrides_rename_all() {
    assert_eq!(Outcome::Success.as_str(), "success");
    assert_eq!(Outcome::TimedOut.as_str(), "timed_out");
    assert_eq!(Outcome::Failure.as_str(), "error");
    assert_eq!(Outcome::NotStarted.as_str(), "Not Started");
}

#[test]
fn all_lists_the_variants_in_declaration_order_with_their_fixed_values() {
    let all = [
        Outcome::Success,
        Outcome::TimedOut,
        Outcome::Failure,
        Outcome::NotStarted,
    ];
    assert_eq!(Outcome::ALL, all);
    assert_eq!(<Outcome as FixedAttributeValue>::ALL, all);
    assert_eq!(
        Outcome::FIXED_VALUES,
        Some(&["success", "timed_out", "error", "Not Started"][..])
    );
    // The two lists agree position by position.
    let strings: Vec<&str> = Outcome::ALL.iter().map(|o| o.as_str()).collect();
    assert_eq!(Some(strings.as_slice()), Outcome::FIXED_VALUES);
}

#[test]
fn display_key_part_and_value_are_the_wire_string() {
    for outcome in Outcome::ALL {
        let wire = outcome.as_str();
        assert_eq!(outcome.to_string(), wire);
        assert_eq!(outcome.key_part(), Some(KeyPart::Str(wire)));
        assert_eq!(outcome.to_value(), Some(Value::from(wire)));
    }
}

#[test]
fn bool_has_fixed_values_and_free_form_types_have_none() {
    assert_eq!(bool::FIXED_VALUES, Some(&["false", "true"][..]));
    assert_eq!(<bool as FixedAttributeValue>::ALL, [false, true]);
    // Each listed string is the one `bool` exports.
    for (value, wire) in [false, true].iter().zip(bool::FIXED_VALUES.unwrap()) {
        assert_eq!(value.to_value().unwrap().as_str(), *wire);
    }
    assert_eq!(String::FIXED_VALUES, None);
    assert_eq!(<&'static str>::FIXED_VALUES, None);
    assert_eq!(i64::FIXED_VALUES, None);
}

/// An enum without variants has no values, and still compiles.
#[derive(AttributeValue, Clone, Copy)]
enum Never {}

#[test]
fn an_enum_without_variants_has_no_values() {
    assert!(Never::ALL.is_empty());
    assert_eq!(Never::FIXED_VALUES, Some(&[][..]));
}

/// The built-in sets' enums kept the strings they exported before the
/// derive replaced their hand-written tables.
#[test]
fn built_in_enums_export_their_documented_strings() {
    assert_eq!(
        RolloutOutcome::FIXED_VALUES,
        Some(&["success", "failure"][..])
    );
    assert_eq!(
        RetryReason::FIXED_VALUES,
        Some(&["server_disconnected", "client_os_error", "timeout", "other"][..])
    );
    assert_eq!(
        TokenModality::FIXED_VALUES,
        Some(&["text", "image", "audio", "unknown"][..])
    );
    assert_eq!(
        FinishReason::FIXED_VALUES,
        Some(&["stop", "length", "abort", "error"][..])
    );
    assert_eq!(RetryReason::ClientOsError.to_string(), "client_os_error");
    assert_eq!(FinishReason::ALL.len(), 4);
}

/// Jobs finished, by outcome.
#[derive(Instruments, Default)]
struct JobMetrics {
    /// Jobs finished.
    #[counter("app.job.finished", unit = "{job}")]
    finished: Option<u64>,
    /// How the job ended.
    #[attribute("app.job.outcome")]
    outcome: Option<Outcome>,
}

#[test]
fn an_enum_attribute_field_exports_the_variant_wire_string() {
    let capture = Capture::new();
    let meter = capture.meter();
    JobMetrics::default()
        .outcome(Outcome::TimedOut)
        .finished(2)
        .record(meter);
    JobMetrics::default()
        .outcome(Outcome::Failure)
        .finished(1)
        .record(meter);
    JobMetrics::default()
        .outcome(Outcome::TimedOut)
        .finished(3)
        .record(meter);
    // Without a value the attribute is omitted.
    JobMetrics::default().finished(4).record(meter);

    let finished = |outcome| capture.sum("app.job.finished", &[("app.job.outcome", outcome)]);
    assert_eq!(finished("timed_out"), Some(5.0));
    assert_eq!(finished("error"), Some(1.0));
    assert_eq!(capture.sum("app.job.finished", &[]), Some(10.0));
    // Three series: one without the attribute, and each outcome.
    let series: Vec<String> = capture
        .exposition()
        .lines()
        .filter(|l| l.starts_with("app_job_finished_total{"))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        series,
        [
            r#"app_job_finished_total{otel_scope_name="nemo.lens"} 4"#,
            r#"app_job_finished_total{app_job_outcome="error",otel_scope_name="nemo.lens"} 1"#,
            r#"app_job_finished_total{app_job_outcome="timed_out",otel_scope_name="nemo.lens"} 5"#,
        ]
    );
}
