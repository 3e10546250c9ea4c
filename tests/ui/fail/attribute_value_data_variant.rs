//! Variants holding data are refused, both reported, and the generated API
//! still exists so its uses add no error.

use nemo_lens::{AttributeValue, Instruments, Meter};

#[derive(AttributeValue, Clone, Copy)]
enum Outcome {
    Success,
    Failure(u16),
    Timeout { after_s: u32 },
}

#[derive(Instruments, Default)]
struct Jobs {
    /// Jobs finished.
    #[counter("app.job.finished")]
    finished: Option<u64>,
    /// How the job ended.
    #[attribute("app.job.outcome")]
    outcome: Option<Outcome>,
}

fn main() {
    let _ = (
        Outcome::ALL,
        Outcome::Success.as_str(),
        Outcome::Success.to_string(),
    );
    Jobs::default()
        .outcome(Outcome::Success)
        .finished(1)
        .record(&Meter::noop());
}
