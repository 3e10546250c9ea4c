//! Helpers shared by the integration tests.

pub mod otlp_receiver;
#[cfg(feature = "otlp-tls")]
pub mod tls;
