use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Request duration.
    #[histogram("app.duration", unit = "s")]
    duration_s: Option<f64>,
    /// Why it failed.
    #[attribute("error.type", only(duraton_s))]
    error_type: Option<String>,
    /// The model.
    #[attribute("app.model", only(error_type))]
    model: Option<String>,
}

fn main() {}
