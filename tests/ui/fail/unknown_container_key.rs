use nemo_lens::Instruments;

#[derive(Instruments)]
#[instruments(prefx = "rl")]
struct Metrics {
    /// Policy entropy.
    #[gauge("rl.entropy")]
    entropy: Option<f64>,
}

fn main() {}
