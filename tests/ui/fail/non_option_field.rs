use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Mean reward across rollout batch.
    #[gauge("rl.reward.mean")]
    reward_mean: f64,
}

fn main() {}
