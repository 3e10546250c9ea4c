use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Kernel time.
    #[histogram("app.kernel.duration", unit = "µs")]
    kernel: Option<f64>,
}

fn main() {}
