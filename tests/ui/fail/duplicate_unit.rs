use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Rollout duration.
    #[histogram("rl.rollout.duration", unit = "s", unit = "ms")]
    rollout_duration: Option<f64>,
}

fn main() {}
