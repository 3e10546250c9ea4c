//! `unit_in_name` keeps a name that spells its unit, for names that must
//! stay as they are on the wire; a field sharing the instrument may repeat it.

use nemo_lens::Instruments;

#[derive(Instruments, Default)]
struct Gym {
    /// Verification duration in milliseconds (the Python name).
    #[histogram("gym.verify.duration_ms", unit = "ms", unit_in_name, attr("outcome" = "ok"))]
    verify_ok_ms: Option<f64>,
    /// The same instrument for failed verifications.
    #[histogram("gym.verify.duration_ms", attr("outcome" = "failed"), unit_in_name)]
    verify_failed_ms: Option<f64>,
    /// Throughput, named as in Python.
    #[gauge("gym.throughput.tokens_per_sec", unit = "{token}/s", unit_in_name)]
    tokens_per_sec: Option<f64>,
}

#[test]
fn unit_in_name() {
    let names: Vec<String> = Gym::DESCRIPTORS
        .iter()
        .map(|d| d.prometheus_name())
        .collect();
    assert_eq!(
        names,
        [
            "gym_verify_duration_ms_milliseconds",
            "gym_verify_duration_ms_milliseconds",
            "gym_throughput_tokens_per_sec_per_second"
        ]
    );
}
