use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Bytes sent, one value per message.
    #[counter("app.sent", unit = "By")]
    sent: Option<Vec<u64>>,
}

fn main() {}
