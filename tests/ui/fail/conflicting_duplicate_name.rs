use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Number of input and output tokens used.
    #[histogram("gen_ai.client.token.usage", unit = "{token}", attr("gen_ai.token.type" = "input"))]
    input_tokens: Option<u64>,
    /// Number of input and output tokens used.
    #[histogram("GEN_AI.client.token.usage", unit = "{tokens}", attr("gen_ai.token.type" = "output"))]
    output_tokens: Option<u64>,
}

fn main() {}
