use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Request latency.
    #[histogram("app.request.latency_ms", unit = "ms", unit_in_name = true)]
    latency_ms: Option<f64>,
}

fn main() {}
