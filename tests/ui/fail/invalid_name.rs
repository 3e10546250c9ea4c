use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Mean reward across rollout batch.
    #[gauge("1st reward")]
    reward_mean: Option<f64>,
}

fn main() {}
