use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(setters = false, setters = true)]
struct Metrics {
    /// Mean reward.
    #[gauge("rl.reward.mean")]
    reward_mean: Option<f64>,
}

fn main() {}
