use nemo_lens::{Attributes, Instruments};

/// What every set of the service carries.
#[derive(Attributes, Default)]
struct Service {
    /// The model served.
    #[attribute("gen_ai.request.model")]
    model: Option<String>,
}

#[derive(Instruments, Default)]
struct Request {
    /// Time to answer.
    #[histogram("app.request.duration", unit = "s")]
    duration_s: Option<f64>,
    /// The model, declared again.
    #[attribute("gen_ai.request.model")]
    model: Option<String>,
    /// The service.
    #[flatten]
    service: Service,
}

fn main() {}
