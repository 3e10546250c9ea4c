use nemo_lens::Instruments;

#[derive(Instruments)]
struct Rollouts {
    /// Rollouts running.
    #[gauge("app.rollout.running", unit = "{rollout}", start_at_zero)]
    running: Option<u64>,
    /// Time of one rollout.
    #[histogram("app.rollout.duration", unit = "s", start_at_zero)]
    duration_s: Option<f64>,
}

fn main() {}
