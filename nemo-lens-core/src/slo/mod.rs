//! Latency objectives for served requests, written as NVIDIA aiperf writes
//! them (`--goodput "time_to_first_token:300 request_latency:3000"`), and the
//! judge that tells whether one request met them all, by aiperf's own
//! definitions: the server counts goodput live, and its count agrees with
//! what aiperf reports offline.
//!
//! - [`Slo`]: the objectives of one model (or of every model), parsed from
//!   the `--goodput` string or built in code.
//! - [`Objectives`]: what a meter judges with: one [`Slo`] for every model
//!   and, where one server serves several, one per model.
//! - [`Served`] and [`Verdict`]: one request's measurements, and whether it
//!   met every objective or which it missed first.
//!
//! ```
//! use std::time::Duration;
//! use nemo_lens::slo::{Served, Slo, Verdict};
//!
//! let slo: Slo = "time_to_first_token:300 request_latency:3000".parse().unwrap();
//! let fast = Served::ok(Duration::from_millis(900))
//!     .time_to_first_token(Duration::from_millis(20))
//!     .output_tokens(40);
//! assert_eq!(slo.judge(&fast), Verdict::Met);
//! let slow = fast.clone().time_to_first_token(Duration::from_millis(700));
//! assert_eq!(slo.judge(&slow).as_str(), "ttft");
//! ```

mod judge;
mod objective;
mod parse;

pub use judge::{Served, Verdict};
pub use objective::{Objective, ObjectiveKind, Objectives, Slo};
pub use parse::SloParseError;

/// The environment variable that holds a process's objectives, in aiperf's
/// `--goodput` syntax.
pub const NEMO_LENS_SLO: &str = "NEMO_LENS_SLO";
