use std::time::Duration;

use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(guard)]
struct Job {
    /// Time of one job.
    #[histogram("app.job.duration", unit = "s", elapsed)]
    duration: Option<Duration>,
    /// How the job ended.
    #[attribute("error.type", error_type)]
    error_type: Option<String>,
    /// Why, again.
    #[attribute("app.failure", error_type)]
    failure: Option<String>,
}

fn main() {}
