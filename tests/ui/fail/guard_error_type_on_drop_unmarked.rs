use std::time::Duration;

use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(guard)]
struct Job {
    /// Time of one job.
    #[histogram("app.job.duration", unit = "s", elapsed)]
    duration: Option<Duration>,
    /// How the job ended.
    #[attribute("error.type", on_drop = "cancelled")]
    error_type: Option<String>,
}

fn main() {}
