use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(prefix = "rl")]
#[instruments(prefix = "gym")]
struct Metrics {
    /// Mean reward.
    #[gauge]
    reward_mean: Option<f64>,
}

fn main() {}
