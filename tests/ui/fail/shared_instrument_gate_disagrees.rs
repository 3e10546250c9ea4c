use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Input tokens.
    #[counter(
        "app.usage.tokens",
        unit = "{token}",
        attr("app.direction" = "input"),
        opt_in = "app_latest"
    )]
    input_tokens: Option<u64>,
    /// Output tokens, into the same counter, but gated differently.
    #[counter(
        "app.usage.tokens",
        attr("app.direction" = "output"),
        until_opt_in = "app_latest"
    )]
    output_tokens: Option<u64>,
}

fn main() {}
