use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Tokens used.
    #[counter("app.tokens", attr("type" = "input"), attr("phase" = "prefill"))]
    input_tokens: Option<u64>,
}

fn main() {}
