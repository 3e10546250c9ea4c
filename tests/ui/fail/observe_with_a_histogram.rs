use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(observe)]
struct QueueState {
    /// Requests waiting.
    #[gauge("app.queue.waiting", unit = "{request}")]
    waiting: Option<u64>,
    /// Time requests waited.
    #[histogram("app.queue.wait", unit = "s")]
    wait_s: Option<f64>,
}

fn main() {}
