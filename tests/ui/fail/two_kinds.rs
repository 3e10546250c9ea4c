use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Rollout duration.
    #[gauge("rl.rollout.last_ms")]
    #[histogram("rl.rollout.duration_ms", unit = "ms")]
    rollout_duration_ms: Option<f64>,
}

fn main() {}
