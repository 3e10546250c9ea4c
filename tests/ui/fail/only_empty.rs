use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Request duration.
    #[histogram("app.duration", unit = "s")]
    duration_s: Option<f64>,
    /// Why it failed.
    #[attribute("error.type", only())]
    error_type: Option<String>,
}

fn main() {}
