use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(guard)]
struct Job {
    /// Jobs started.
    #[counter("app.jobs.started", unit = "{job}", in_flight)]
    started: Option<u64>,
}

fn main() {}
