use std::time::Duration;

use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Time of the last step.
    #[gauge("app.step.duration", unit = "s")]
    last_step: Option<Duration>,
    /// Time spent waiting.
    #[counter("app.wait.time", unit = "s")]
    waited: Option<Duration>,
    /// Time in flight.
    #[up_down_counter("app.inflight.time", unit = "s")]
    in_flight: Option<Duration>,
}

fn main() {}
