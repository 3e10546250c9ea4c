//! Helpers shared by the integration tests.

pub mod otlp_receiver;
