use nemo_lens::{Instruments, Meter};

// Three mistakes, three messages, and no extra error at the `record` call.
#[derive(Instruments, Default)]
struct Metrics {
    /// Policy entropy.
    #[gauge("rl entropy")]
    entropy: Option<f64>,
    /// Step time.
    #[gauge("train.step_time", unit = "s")]
    step_time: Option<f64>,
    /// Skipped iterations.
    #[counter("train.skipped")]
    skipped: Option<i32>,
}

fn main() {
    Metrics::default().record(&Meter::noop());
}
