use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Requests waiting.
    #[gauge("app.requests.waiting", unit = "{request}", aggregation = "base2_exponential_bucket_histogram")]
    waiting: Option<u64>,
}

fn main() {}
