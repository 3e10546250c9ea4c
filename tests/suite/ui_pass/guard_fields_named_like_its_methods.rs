//! Fields named like the guard's own methods keep their setters on the set
//! and get `set_..` on the guard.
use std::time::Duration;

use nemo_lens::{Instruments, Meter};

#[derive(Instruments, Default)]
#[instruments(guard)]
struct Job {
    /// Time of one job.
    #[histogram("app.job.duration", unit = "s", elapsed)]
    elapsed: Option<Duration>,
    /// Jobs finished.
    #[counter("app.job.finished", unit = "{job}")]
    finish: Option<u64>,
}

#[test]
fn guard_fields_named_like_its_methods() {
    let meter = Meter::noop();
    let _ = Job::default().finish(1).elapsed(Duration::from_secs(1));
    let mut job = Job::start(&meter);
    job.set_finish(1);
    let _: Duration = job.elapsed();
    job.finish();
}
