//! Settings that would change nothing are said, not ignored: a misspelt
//! GenAI opt-in, and `OTEL_EXPORTER_OTLP_INSECURE`. In a process of
//! its own: tracing caches whether a call site is wanted process-wide.

use crate::support::log_lines::Lines;
use nemo_lens::{EnvLookup, NemoLensConfig};

#[test]
fn settings_that_change_nothing_are_warned_about() {
    crate::support::own_process!(settings_that_change_nothing_are_warned_about);
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let config = tracing::subscriber::with_default(subscriber, || {
        NemoLensConfig::from_lookup(EnvLookup::from_pairs([
            ("NEMO_LENS_ENABLED", "1"),
            ("NEMO_LENS_EXPORTER", "otlp"),
            ("OTEL_EXPORTER_OTLP_INSECURE", "true"),
            (
                "OTEL_SEMCONV_STABILITY_OPT_IN",
                "http,gen_ai_latest_experimentl",
            ),
        ]))
    })
    .expect("both are warnings, not errors");
    assert!(config.semconv_opt_in.records_new("http"));
    let text = lines.text();
    assert!(
        text.contains("OTEL_EXPORTER_OTLP_INSECURE has no effect"),
        "{text}"
    );
    assert!(
        text.contains("`gen_ai_latest_experimentl`")
            && text.contains("did you mean `gen_ai_latest_experimental`"),
        "{text}"
    );
    assert!(!text.contains("`http`"), "another library's area: {text}");
}
