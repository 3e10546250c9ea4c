//! A setup that fails does not count as "already set up": in a process of
//! its own, so no other setup in the process interferes.

use std::net::TcpListener;

use nemo_lens::telemetry::{EnvLookup, NemoLensConfig, SetupError, SetupOptions};

#[test]
fn a_failed_setup_can_be_retried_without_reinit() {
    crate::support::own_process!(a_failed_setup_can_be_retried_without_reinit);
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", port.as_str()),
    ]))
    .unwrap();
    let setup = || {
        SetupOptions::new()
            .env(EnvLookup::from_pairs([("X", "1")]))
            .probe_gpus(false)
            .setup(&config, 0, 1)
    };
    let err = setup().unwrap_err();
    assert!(matches!(err, SetupError::Bind { .. }), "{err}");

    drop(taken);
    let handle = setup().expect("retry after the port was freed");
    assert!(handle.is_exporting);
    assert_eq!(handle.prometheus_addr().unwrap().port().to_string(), port);
    // Now it counts.
    assert!(matches!(setup(), Err(SetupError::AlreadyInitialized)));
    handle.shutdown().unwrap();
}
