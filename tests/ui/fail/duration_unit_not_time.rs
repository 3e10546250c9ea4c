use std::time::Duration;

use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Bytes read, as a time by mistake.
    #[histogram("app.read.size", unit = "By")]
    read: Option<Duration>,
    /// Time of one step, with no unit.
    #[histogram("app.step.duration")]
    step: Option<Duration>,
}

fn main() {}
