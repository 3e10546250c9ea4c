use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(crate = "nemo_lens", crate = "nemo_lens_core")]
struct Metrics {
    /// Mean reward.
    #[gauge("rl.reward.mean")]
    reward_mean: Option<f64>,
}

fn main() {}
