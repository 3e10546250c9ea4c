use nemo_lens::Instruments;

#[derive(Instruments)]
struct Rollouts {
    /// Rollouts finished.
    #[counter("app.rollout.finished", unit = "{rollout}", start_at_zero)]
    finished: Option<u64>,
    /// The environment's name: any string.
    #[attribute("app.env.name")]
    env: Option<String>,
}

fn main() {}
