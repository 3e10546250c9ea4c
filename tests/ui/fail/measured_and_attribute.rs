use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Queue depth, measured and attached at once.
    #[gauge("app.queue.depth")]
    #[attribute("app.queue.depth")]
    depth: Option<u64>,
}

fn main() {}
