//! `setters = false`: a rejected declaration emits no setters either, so the
//! user's own keep compiling and the one mistake is the one error.

use nemo_lens::Instruments;

#[derive(Instruments, Default)]
#[instruments(setters = false)]
struct Step {
    /// Step time.
    #[gauge("app.step.time", unit = "ms")]
    time_ms: Option<f64>,
}

impl Step {
    fn time_ms(mut self, ms: f64) -> Self {
        self.time_ms = Some(ms);
        self
    }
}

fn main() {
    let _ = Step::default().time_ms(12.0);
}
