use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Tokens used.
    #[counter("app.usage.tokens", unit = "{token}")]
    #[counter("app.usage.tokens", unit = "{token}")]
    tokens: Option<u64>,
}

fn main() {}
