use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Request latency.
    #[histogram("app.request.latency_ms", unit = "ms")]
    latency_ms: Option<f64>,
}

fn main() {}
