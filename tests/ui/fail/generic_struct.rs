use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics<T> {
    /// Policy entropy.
    #[gauge("rl.entropy")]
    entropy: Option<f64>,
    marker: std::marker::PhantomData<T>,
}

fn main() {}
