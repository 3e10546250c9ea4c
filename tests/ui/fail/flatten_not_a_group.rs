use nemo_lens::Instruments;

#[derive(Default)]
struct NotAGroup {
    model: Option<String>,
}

#[derive(Instruments, Default)]
struct Request {
    /// Time to answer.
    #[histogram("app.request.duration", unit = "s")]
    duration_s: Option<f64>,
    /// Not an attribute group.
    #[flatten]
    service: NotAGroup,
}

fn main() {}
