//! Goodput counted where requests end: `InferenceRequest` judges each one
//! against the meter's objectives (`NEMO_LENS_SLO`, per model where set) and
//! counts it in `nemo.inference.requests.judged` by result; without
//! objectives nothing is added.

use std::time::{Duration, Instant};

use nemo_lens::instruments::InferenceRequest;
use nemo_lens::slo::{Objectives, Slo};
use nemo_lens::testing::Capture;
use nemo_lens::Meter;

const JUDGED: &str = "nemo.inference.requests.judged";

/// A streamed request to `model`: first token after `ttft_ms`, then `tokens`
/// tokens in all, the last content `latency_ms` after the start.
fn streamed(meter: &Meter, model: &'static str, ttft_ms: u64, latency_ms: u64, tokens: u64) {
    let t0 = Instant::now();
    let ms = |n| t0 + Duration::from_millis(n);
    let mut request = InferenceRequest::start_at(meter, t0).model(model);
    request.first_token_at(ms(ttft_ms));
    request.add_output_tokens(tokens);
    request.last_token_at(ms(latency_ms));
    // Usage and [DONE] come later: not part of the request latency.
    request.finish_at(ms(latency_ms + 500));
}

fn slo(objectives: &str) -> Slo {
    objectives.parse().unwrap()
}

fn results(capture: &Capture) -> Vec<(String, String, f64)> {
    let mut rows = Vec::new();
    for set in capture.attribute_sets(JUDGED) {
        let get = |key: &str| {
            set.iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let (model, result) = (
            get("gen_ai.request.model"),
            get("nemo.inference.slo.result"),
        );
        let attributes = [
            ("gen_ai.request.model", model.as_str()),
            ("nemo.inference.slo.result", result.as_str()),
        ];
        rows.push((
            model.clone(),
            result.clone(),
            capture.sum(JUDGED, &attributes).unwrap(),
        ));
    }
    rows.sort_by(|a, b| a.partial_cmp(b).unwrap());
    rows
}

#[test]
fn each_request_is_counted_met_or_by_the_objective_it_missed_first() {
    let capture = Capture::new();
    let meter = capture.meter().with_objectives(Objectives::new(slo(
        "time_to_first_token:300 inter_token_latency:20 request_latency:3000",
    )));
    // ITL (1000 - 20) / (50 - 1) = 20 ms: met, at the target.
    streamed(&meter, "llama", 20, 1000, 50);
    streamed(&meter, "llama", 20, 1000, 50);
    // TTFT 700 ms: missed, though its ITL and latency are fine.
    streamed(&meter, "llama", 700, 1200, 50);
    // ITL (1500 - 20) / 49 = 30.2 ms.
    streamed(&meter, "llama", 20, 1500, 50);
    // A one-token reply has no ITL: not good.
    streamed(&meter, "llama", 20, 20, 1);
    // The latency to its last content is 4 s.
    streamed(&meter, "llama", 100, 4000, 500);
    let t0 = Instant::now();
    InferenceRequest::start_at(&meter, t0)
        .model("llama")
        .fail_at("cancelled", t0 + Duration::from_millis(5));
    let rows = results(&capture);
    assert_eq!(
        rows,
        [
            ("llama".into(), "e2e".into(), 1.0),
            ("llama".into(), "error".into(), 1.0),
            ("llama".into(), "itl".into(), 2.0),
            ("llama".into(), "met".into(), 2.0),
            ("llama".into(), "ttft".into(), 1.0),
        ]
    );
}

#[test]
fn a_model_with_its_own_objectives_is_judged_by_them() {
    let capture = Capture::new();
    let objectives = Objectives::per_model()
        .model("big", slo("time_to_first_token:800"))
        .model("small", slo("time_to_first_token:100"));
    let meter = capture.meter().with_objectives(objectives);
    streamed(&meter, "big", 500, 900, 10);
    streamed(&meter, "small", 500, 900, 10);
    // No objectives for other models: not judged.
    streamed(&meter, "other", 500, 900, 10);
    assert_eq!(
        results(&capture),
        [
            ("big".into(), "met".into(), 1.0),
            ("small".into(), "ttft".into(), 1.0),
        ]
    );
}

#[test]
fn without_objectives_nothing_is_judged_or_added() {
    let capture = Capture::new();
    streamed(capture.meter(), "llama", 20, 1000, 50);
    assert!(capture.meter().objectives().is_none());
    let names = capture.names();
    assert!(!names.iter().any(|n| n.contains("judged")), "{names:?}");
    assert!(names.contains(&"gen_ai.server.request.duration".to_owned()));
}

/// `NEMO_LENS_SLO` through `setup_telemetry`: the meter it returns judges
/// what its guards end; `SetupOptions::objectives` wins over it.
#[test]
fn nemo_lens_slo_reaches_the_meter_setup_returns() {
    use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions};

    let _serial = crate::support::exclusive();
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        (
            "NEMO_LENS_SLO",
            "time_to_first_token:300 request_latency:3000",
        ),
    ]))
    .unwrap();
    let options = || {
        SetupOptions::new()
            .env(EnvLookup::from_pairs([("X", "1")]))
            .allow_reinit(true)
            .probe_gpus(false)
            .set_global(false)
    };
    let handle = options().setup(&config, 0, 1).unwrap();
    assert_eq!(
        handle
            .meter
            .objectives()
            .unwrap()
            .for_model(None)
            .unwrap()
            .to_string(),
        "time_to_first_token:300 request_latency:3000"
    );
    handle.shutdown().unwrap();
    let handle = options()
        .objectives(Objectives::new(slo("inter_token_latency:15")))
        .setup(&config, 0, 1)
        .unwrap();
    assert_eq!(
        handle
            .meter
            .objectives()
            .unwrap()
            .for_model(Some("m"))
            .unwrap()
            .to_string(),
        "inter_token_latency:15"
    );
    handle.shutdown().unwrap();
}
