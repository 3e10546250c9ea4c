use nemo_lens::Instruments;

// The name comes from the prefix and the field, and the field spells the unit.
#[derive(Instruments)]
#[instruments(prefix = "app")]
struct Metrics {
    /// Bytes sent.
    #[counter(unit = "By")]
    sent_bytes: Option<u64>,
}

fn main() {}
