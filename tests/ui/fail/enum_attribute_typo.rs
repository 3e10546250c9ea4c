use nemo_lens::instruments::gym::unreleased::{RetryReason, RolloutMetrics, RolloutOutcome};
use nemo_lens::{Instruments, Meter};

fn main() {
    let meter = Meter::noop();
    // A misspelled variant does not exist.
    RolloutMetrics::default()
        .outcome(RolloutOutcome::Sucess)
        .completed(1)
        .record(&meter);
    // Nor does a free-form string stand in for the enum.
    RolloutMetrics::default()
        .outcome("success")
        .completed(1)
        .record(&meter);
    let _ = RetryReason::Timeout;
}
