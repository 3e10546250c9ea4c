use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Request latency.
    #[histogram("app.request.latency", unit = "ms", unit_in_name)]
    latency_ms: Option<f64>,
}

fn main() {}
