use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Duration of rollout collection in milliseconds.
    #[histogram("rl.rollout.duration_ms", unti = "ms")]
    rollout_duration_ms: Option<f64>,
}

fn main() {}
