use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    #[gauge("rl.reward.mean")]
    reward_mean: Option<f64>,
}

fn main() {}
