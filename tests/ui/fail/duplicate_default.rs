use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Queue depth.
    #[gauge("app.queue.depth")]
    depth: Option<u64>,
    /// The provider.
    #[attribute("gen_ai.provider.name", default = "nemo", default = "vllm")]
    provider: Option<String>,
}

fn main() {}
