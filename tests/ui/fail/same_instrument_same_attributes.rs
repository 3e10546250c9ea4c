use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Tokens used.
    #[counter("app.tokens", attr("kind" = "prompt"))]
    prompt: Option<u64>,
    /// Tokens used.
    #[counter("app.tokens", attr("kind" = "prompt"))]
    completion: Option<u64>,
}

fn main() {}
