use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Mean reward across rollout batch.
    #[gauge("rl.reward.mean", buckets = [0.0, 0.5, 1.0])]
    reward_mean: Option<f64>,
}

fn main() {}
