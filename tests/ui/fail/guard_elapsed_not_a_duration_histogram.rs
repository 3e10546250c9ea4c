use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(guard)]
struct Job {
    /// Time of one job, in seconds as a number.
    #[histogram("app.job.duration", unit = "s", elapsed)]
    duration_s: Option<f64>,
    /// Jobs done.
    #[counter("app.jobs.done", unit = "{job}", elapsed)]
    done: Option<u64>,
}

fn main() {}
