use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Duration of rollout collection in milliseconds.
    #[gauge("rl.rollout.duration", unit = "ms")]
    rollout_duration_ms: Option<f64>,
}

fn main() {}
