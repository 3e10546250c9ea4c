//! The integration tests of setup and the exporters, one module per area,
//! in one binary: configuration and setup, the Prometheus endpoint, OTLP
//! over gRPC and HTTP (and TLS) against receivers built on the official
//! protobuf definitions (`nemo-lens-test-support`), the bridges over OTLP,
//! exemplars. Tests of what one pipeline owns in a process take turns
//! (`support::exclusive`); the fault suite, whose figures need the cores to
//! themselves, is the other binary (`tests/faults`).

use nemo_lens_test_support as support;

#[cfg(all(feature = "prometheus", feature = "testing"))]
mod exemplars;
mod first_run;
mod launcher;
#[cfg(feature = "otlp-tls")]
mod metrics_bridge_otlp;
#[cfg(feature = "otlp")]
mod otlp_env_isolation;
#[cfg(feature = "otlp")]
mod otlp_exponential;
#[cfg(feature = "otlp")]
mod otlp_export;
#[cfg(all(feature = "otlp", feature = "testing"))]
mod otlp_series_end;
#[cfg(feature = "otlp-tls")]
mod otlp_tls_self_signed;
#[cfg(feature = "prometheus")]
mod prometheus_endpoint;
#[cfg(feature = "prometheus-tls")]
mod prometheus_web_config;
#[cfg(feature = "otlp-tls")]
mod registry_bridge_otlp;
mod setting_warnings;
mod setup;
#[cfg(feature = "prometheus")]
mod setup_retry;
