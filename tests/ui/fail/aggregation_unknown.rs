use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Time to first token.
    #[histogram("app.time_to_first_token", unit = "s", aggregation = "base2_exponential_histogram")]
    ttft: Option<f64>,
}

fn main() {}
