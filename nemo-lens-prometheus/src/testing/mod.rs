//! Testing what your sets emit (feature `testing`): [`Capture`] records
//! through a meter of its own and reads the values back, or the whole
//! Prometheus text exposition for a snapshot; [`declared`] writes what a set
//! declares as a table, so a renamed metric or a new unit shows up as a
//! reviewed diff rather than a broken dashboard.
//!
//! Values, by OpenTelemetry instrument name and attribute pairs (a pair the
//! query leaves out is summed over):
//!
//! ```
//! use nemo_lens::testing::Capture;
//! use nemo_lens::{AttributeValue, Instruments};
//!
//! #[derive(AttributeValue, Clone, Copy)]
//! #[attribute_value(rename_all = "snake_case")]
//! enum Outcome {
//!     Success,
//!     Failure,
//! }
//!
//! /// Rollouts of one environment.
//! #[derive(Instruments, Default)]
//! struct Rollouts {
//!     /// Rollouts finished.
//!     #[counter("app.rollout.finished", unit = "{rollout}")]
//!     finished: Option<u64>,
//!     /// Time of one rollout.
//!     #[histogram("app.rollout.duration", unit = "s")]
//!     duration_s: Option<f64>,
//!     /// Rollouts waiting for a worker.
//!     #[gauge("app.rollout.queued", unit = "{rollout}")]
//!     queued: Option<u64>,
//!     /// How the rollout ended.
//!     #[attribute("app.rollout.outcome")]
//!     outcome: Option<Outcome>,
//! }
//!
//! let capture = Capture::new();
//! let meter = capture.meter();
//! Rollouts::default().finished(1).duration_s(2.0).outcome(Outcome::Success).record(meter);
//! Rollouts::default().finished(1).duration_s(4.0).outcome(Outcome::Failure).record(meter);
//! Rollouts::default().queued(3).record(meter);
//!
//! assert_eq!(capture.sum("app.rollout.finished", &[]), Some(2.0));
//! let failed = [("app.rollout.outcome", "failure")];
//! assert_eq!(capture.sum("app.rollout.finished", &failed), Some(1.0));
//! assert_eq!(capture.count("app.rollout.duration", &[]), Some(2));
//! assert_eq!(capture.sum("app.rollout.duration", &failed), Some(4.0));
//! assert_eq!(capture.last_value("app.rollout.queued", &[]), Some(3.0));
//! // No point with that attribute value. (A name or attribute key the
//! // capture has never seen panics instead, listing what it has.)
//! assert_eq!(capture.sum("app.rollout.finished", &[("app.rollout.outcome", "timeout")]), None);
//! ```
//!
//! A snapshot of the exposition: here its lines inline; with a snapshot
//! crate, `insta::assert_snapshot!(capture.exposition())` or
//! `expect_test::expect![[..]].assert_eq(&capture.exposition())` in a test
//! file, which write the snapshot for you the first time and show a diff
//! after.
//!
//! ```
//! use nemo_lens::testing::Capture;
//! use nemo_lens::Instruments;
//!
//! #[derive(Instruments, Default)]
//! struct Steps {
//!     /// Iterations skipped because of non-finite gradients.
//!     #[counter("train.skipped_iters", unit = "{iteration}")]
//!     skipped_iters: Option<u64>,
//! }
//!
//! let capture = Capture::new();
//! Steps::default().skipped_iters(2).record(capture.meter());
//! assert_eq!(
//!     capture.exposition().lines().collect::<Vec<_>>(),
//!     [
//!         "# HELP train_skipped_iters_total Iterations skipped because of non-finite gradients.",
//!         "# TYPE train_skipped_iters_total counter",
//!         r#"train_skipped_iters_total{otel_scope_name="nemo.lens"} 2"#,
//!     ]
//! );
//! ```
//!
//! And what a set declares, for a snapshot that changes only when a
//! declaration does ([`declared`] describes the format):
//!
//! ```
//! # use nemo_lens::Instruments;
//! # #[derive(Instruments, Default)]
//! # struct Steps {
//! #     /// Iterations skipped because of non-finite gradients.
//! #     #[counter("train.skipped_iters", unit = "{iteration}")]
//! #     skipped_iters: Option<u64>,
//! # }
//! assert_eq!(
//!     nemo_lens::testing::declared::<Steps>(),
//!     "skipped_iters: train.skipped_iters counter<u64> unit=\"{iteration}\" \
//!      prometheus=train_skipped_iters_total{} attributes=[]\n"
//! );
//! ```

mod capture;
mod clock;
mod declared;
#[cfg(test)]
mod expiry_tests;
mod lookup;

pub use capture::Capture;
pub use clock::ManualClock;
pub use declared::declared;
