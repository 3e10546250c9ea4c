//! A first run whose environment asks for an exporter without switching
//! telemetry on is told so on stderr, once; a run that asks for nothing, or
//! switched telemetry off, hears nothing.
//!
//! The line goes to the real stderr once per process, so each case runs
//! this test binary again as a child with an environment of its own.

use std::process::Command;

use nemo_lens::telemetry::{setup_telemetry, NemoLensConfig};

/// Set in a child: the prefix its configuration is read under.
const CHILD: &str = "NEMO_LENS_TEST_FIRST_RUN_PREFIX";

/// In a child, what a program written from the README does: read the
/// environment and set up, twice, as a program retrying setup might.
#[test]
fn child_sets_up_from_the_environment() {
    let Ok(prefix) = std::env::var(CHILD) else {
        return;
    };
    for _ in 0..2 {
        let config = if prefix == "NEMO_LENS" {
            NemoLensConfig::from_env()
        } else {
            NemoLensConfig::from_env_with_prefix(&prefix, Some("NEMO_LENS"))
        }
        .unwrap();
        let handle = setup_telemetry(&config, 0, 1).unwrap();
        assert!(!handle.is_exporting);
        assert!(handle.why_not_exporting().is_some());
    }
}

/// The stderr of a child run with `env` and nothing else of nemo-lens's or
/// OpenTelemetry's from this process.
fn stderr_of(prefix: &str, env: &[(&str, &str)]) -> String {
    let mut child = Command::new(std::env::current_exe().unwrap());
    child.args([
        "--exact",
        "first_run::child_sets_up_from_the_environment",
        "--nocapture",
        "--test-threads=1",
    ]);
    for (key, _) in std::env::vars_os() {
        let key_str = key.to_string_lossy();
        if ["NEMO_LENS_", "MEGATRON_OTEL_", "OTEL_"]
            .iter()
            .any(|p| key_str.starts_with(p))
        {
            child.env_remove(&key);
        }
    }
    let output = child
        .env(CHILD, prefix)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "child {env:?}: {stdout}{stderr}"
    );
    stderr
}

#[test]
fn an_exporter_asked_for_without_enabling_is_explained_once_on_stderr() {
    assert_eq!(
        stderr_of("NEMO_LENS", &[("NEMO_LENS_EXPORTER", "prometheus")]),
        "nemo-lens: NEMO_LENS_EXPORTER=prometheus is set but telemetry is off: set \
         NEMO_LENS_ENABLED=true (or 1) to export; nothing is recorded or exported\n"
    );
    assert_eq!(
        stderr_of(
            "NEMO_LENS",
            &[(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://user:secret@collector:4317"
            )]
        ),
        "nemo-lens: OTEL_EXPORTER_OTLP_ENDPOINT is set but telemetry is off: set \
         NEMO_LENS_ENABLED=true (or 1) to export; nothing is recorded or exported\n"
    );
    assert_eq!(
        stderr_of(
            "MEGATRON_OTEL",
            &[("OTEL_EXPORTER_PROMETHEUS_PORT", "9464")]
        ),
        "nemo-lens: OTEL_EXPORTER_PROMETHEUS_PORT is set but telemetry is off: set \
         MEGATRON_OTEL_ENABLED=true (or 1) to export; nothing is recorded or exported\n"
    );
}

#[test]
fn a_run_that_asked_for_nothing_or_switched_telemetry_off_is_silent() {
    assert_eq!(stderr_of("NEMO_LENS", &[]), "");
    assert_eq!(
        stderr_of("NEMO_LENS", &[("OTEL_SERVICE_NAME", "trainer")]),
        ""
    );
    for off in [
        ("NEMO_LENS_ENABLED", "false"),
        ("OTEL_SDK_DISABLED", "true"),
    ] {
        assert_eq!(
            stderr_of("NEMO_LENS", &[("NEMO_LENS_EXPORTER", "prometheus"), off]),
            "",
            "{off:?}"
        );
    }
}
