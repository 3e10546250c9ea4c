use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics(Option<f64>);

fn main() {}
