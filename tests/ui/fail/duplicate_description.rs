use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    #[gauge("rl.reward.mean", description = "Mean reward.", description = "Reward mean.")]
    reward_mean: Option<f64>,
}

fn main() {}
