use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Request latency.
    #[histogram("app.latency", unit = "s", buckets = [0.1, 0.5, 0.5, 2.0])]
    latency: Option<f64>,
    /// Queue wait.
    #[histogram("app.queue_wait", unit = "s", buckets = [0.1, 1e400])]
    queue_wait: Option<f64>,
}

fn main() {}
