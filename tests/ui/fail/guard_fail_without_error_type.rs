use std::time::Duration;

use nemo_lens::{Instruments, Meter};

#[derive(Instruments)]
#[instruments(guard)]
struct Job {
    /// Time of one job.
    #[histogram("app.job.duration", unit = "s", elapsed)]
    duration: Option<Duration>,
}

fn main() {
    let job = Job::start(&Meter::noop());
    job.fail("timeout");
}
