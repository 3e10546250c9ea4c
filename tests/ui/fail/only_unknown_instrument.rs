use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Tokens used.
    #[counter("app.usage.tokens", unit = "{token}")]
    tokens: Option<u64>,
    /// The modality, on the usage counter only.
    #[attribute("app.modality", only("app.usage.token"))]
    modality: Option<String>,
}

fn main() {}
