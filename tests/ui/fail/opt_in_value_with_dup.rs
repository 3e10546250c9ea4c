use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Tokens used.
    #[counter("app.usage.tokens", unit = "{token}", opt_in = "app_latest/dup")]
    tokens: Option<u64>,
}

fn main() {}
