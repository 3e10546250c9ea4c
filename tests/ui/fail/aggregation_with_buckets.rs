use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Time to first token.
    #[histogram(
        "app.time_to_first_token",
        unit = "s",
        buckets = [0.1, 1.0, 10.0],
        aggregation = "base2_exponential_bucket_histogram"
    )]
    ttft: Option<f64>,
}

fn main() {}
