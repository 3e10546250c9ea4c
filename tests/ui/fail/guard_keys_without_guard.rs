use std::time::Duration;

use nemo_lens::Instruments;

#[derive(Instruments)]
struct Job {
    /// Time of one job.
    #[histogram("app.job.duration", unit = "s", elapsed)]
    duration: Option<Duration>,
    /// How the job ended.
    #[attribute("error.type", error_type, on_drop = "cancelled")]
    error_type: Option<String>,
}

fn main() {}
