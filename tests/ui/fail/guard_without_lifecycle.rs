use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(guard)]
struct Job {
    /// Items handled.
    #[counter("app.job.items", unit = "{item}")]
    items: Option<u64>,
}

fn main() {}
