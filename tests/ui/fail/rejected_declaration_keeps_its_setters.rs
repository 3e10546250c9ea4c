//! One mistake (a gauge in milliseconds) is one error: the setters used
//! below still exist, so they add none.

use nemo_lens::Instruments;

#[derive(Instruments, Default)]
struct Step {
    /// Step time.
    #[gauge("app.step.time", unit = "ms")]
    time_ms: Option<f64>,
    /// Loss.
    #[gauge("app.loss")]
    loss: Option<f64>,
    /// Per-sample rewards.
    #[histogram("app.rewards")]
    rewards: Option<Vec<f64>>,
    /// The model.
    #[attribute("app.model")]
    model: Option<nemo_lens::opentelemetry::StringValue>,
    /// The server port.
    #[attribute("server.port")]
    port: Option<u16>,
}

fn main() {
    let _ = Step::default()
        .time_ms(12.0)
        .loss(0.5)
        .rewards([0.1, 0.2])
        .model("llama")
        .port(8000);
}
