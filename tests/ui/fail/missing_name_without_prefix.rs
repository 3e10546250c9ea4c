use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Policy entropy.
    #[gauge]
    entropy: Option<f64>,
}

fn main() {}
