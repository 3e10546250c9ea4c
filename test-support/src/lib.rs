//! What the test binaries of nemo-lens share, in one place (as cargo's own
//! `cargo-test-support`): a meter exporting into memory and its points,
//! `tracing` output captured, a counting allocator, the turns and child
//! processes that keep tests of process-wide state apart, real servers
//! (Prometheus, aiperf, the examples) and how to query them; behind
//! features, OTLP receivers on the official protobuf definitions,
//! certificates made in the test, the OpenAI layer's exchanges; a
//! gateway's traffic. Not
//! published.

pub mod aiperf;
pub mod alloc;
pub mod gateway;
pub mod log_lines;
pub mod messages;
#[cfg(feature = "prometheus")]
pub mod metrics_bridge;
#[cfg(feature = "openai")]
pub mod openai;
#[cfg(feature = "otlp")]
pub mod otlp_http;
#[cfg(feature = "otlp")]
pub mod otlp_receiver;
mod points;
pub mod process;
pub mod servers;
#[cfg(feature = "tls")]
pub mod tls;

pub use points::*;
pub use process::{exclusive, Exclusive};
