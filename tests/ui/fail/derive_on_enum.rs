use nemo_lens::Instruments;

#[derive(Instruments)]
enum Metrics {
    Reward(f64),
}

fn main() {}
