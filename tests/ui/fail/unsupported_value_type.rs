use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// The model that served the request.
    #[gauge("app.model")]
    model: Option<String>,
}

fn main() {}
