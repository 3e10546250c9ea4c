use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Temperature delta.
    #[histogram("app.temperature.delta", unit = "Cel")]
    delta: Option<i32>,
}

fn main() {}
