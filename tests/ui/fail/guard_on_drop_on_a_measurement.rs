use std::time::Duration;

use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(guard)]
struct Job {
    /// Time of one job.
    #[histogram("app.job.duration", unit = "s", elapsed, on_drop = "cancelled")]
    duration: Option<Duration>,
}

fn main() {}
