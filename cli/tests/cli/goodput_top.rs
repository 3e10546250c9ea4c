//! top's goodput column on a nemo-lens endpoint that counts goodput: the
//! share of the interval's judged requests that met every objective, from
//! the counter's two reads, per replica and for all.

use std::time::{Duration, Instant};

use nemo_lens::instruments::InferenceRequest;
use nemo_lens::slo::Objectives;
use nemo_lens::testing::Capture;

use crate::top::fleet_of;

/// `good` requests that meet "time_to_first_token:300" and `slow` that
/// do not.
fn serve(meter: &nemo_lens::Meter, good: u32, slow: u32) {
    for ttft_ms in
        std::iter::repeat_n(20, good as usize).chain(std::iter::repeat_n(700, slow as usize))
    {
        let t0 = Instant::now();
        let mut request = InferenceRequest::start_at(meter, t0).model("llama");
        request.first_token_at(t0 + Duration::from_millis(ttft_ms));
        request.add_output_tokens(8);
        request.finish_at(t0 + Duration::from_millis(ttft_ms + 100));
    }
}

#[test]
fn goodput_is_the_interval_s_share_of_judged_requests_that_met_every_objective() {
    let capture = Capture::new();
    let meter = capture
        .meter()
        .with_objectives(Objectives::new("time_to_first_token:300".parse().unwrap()));
    // Before the first read: 10 good, 10 slow (a share of 0.5 overall).
    serve(&meter, 10, 10);
    let before = capture.exposition();
    // In the interval: 30 good, 10 slow.
    serve(&meter, 30, 10);
    let after = capture.exposition();
    let (rows, all) = fleet_of(vec![[Some(before), Some(after)]]).rows();
    let goodput = rows[0].interval.goodput.expect("a goodput");
    assert!((goodput - 0.75).abs() < 1e-12, "{goodput}, want 30 / 40");
    assert_eq!(all.interval.goodput, rows[0].interval.goodput);

    // An endpoint that judges nothing has no goodput, not 0.
    let plain = Capture::new();
    serve(plain.meter(), 1, 0);
    let first = plain.exposition();
    serve(plain.meter(), 1, 0);
    let (rows, _) = fleet_of(vec![[Some(first), Some(plain.exposition())]]).rows();
    assert_eq!(rows[0].interval.goodput, None);
}
