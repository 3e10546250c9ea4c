use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Time to build one batch.
    #[histogram("app.batch.duration", unit = "seconds")]
    batch: Option<f64>,
    /// Tokens generated.
    #[counter("app.tokens.generated", unit = "tokens")]
    generated: Option<u64>,
}

fn main() {}
