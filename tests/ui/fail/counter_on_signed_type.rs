use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Iterations skipped because of non-finite gradients.
    #[counter("train.skipped_iters")]
    skipped_iters: Option<i64>,
}

fn main() {}
