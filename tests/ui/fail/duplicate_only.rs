use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Request duration.
    #[histogram("app.duration", unit = "s")]
    duration_s: Option<f64>,
    /// Why it failed.
    #[attribute("error.type", only(duration_s), only(duration_s))]
    error_type: Option<String>,
}

fn main() {}
