use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Rollout duration.
    #[histogram("rl.rollout.duration", unit = "s", buckets = [1, 2], buckets = [1, 2, 4])]
    rollout_duration: Option<f64>,
}

fn main() {}
