use std::time::Duration;

use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(guard)]
struct Job {
    /// Time of one job.
    #[histogram("app.job.duration", unit = "s", elapsed)]
    duration: Option<Duration>,
    /// Jobs running.
    #[up_down_counter("app.jobs.active", unit = "{job}", in_flight)]
    active: Option<i64>,
    /// How the job ended, on every instrument.
    #[attribute("error.type", error_type)]
    error_type: Option<String>,
    /// Why a job was dropped, on every instrument.
    #[attribute("app.reason", on_drop = "cancelled")]
    reason: Option<String>,
}

fn main() {}
