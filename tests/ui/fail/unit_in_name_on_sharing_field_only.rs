use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Tokens in, per second.
    #[gauge("app.rate", unit = "{token}/s", attr("direction" = "in"))]
    tokens_in: Option<f64>,
    /// Tokens out, per second: `unit_in_name` belongs on the declaring field.
    #[gauge("app.rate", attr("direction" = "out"), unit_in_name)]
    tokens_out: Option<f64>,
}

fn main() {}
