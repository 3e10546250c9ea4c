//! Goodput: each served request judged against the meter's latency
//! objectives ([`Meter::objectives`], `NEMO_LENS_SLO`) and counted by result,
//! where it happens. [`InferenceRequest`](crate::InferenceRequest) (and so
//! the OpenAI layer and the metering proxy) judges every request it ends;
//! code that times requests its own way judges them with [`judge`].

use nemo_lens_core::slo::{Served, Verdict};
use nemo_lens_core::{Instruments, Meter};
use nemo_lens_macros::Instruments;
use opentelemetry::StringValue;

/// One judged request.
///
/// The attainment over five minutes is
/// `sum(rate(nemo_inference_requests_judged_total{nemo_inference_slo_result="met"}[5m])) / sum(rate(nemo_inference_requests_judged_total[5m]))`,
/// and what the others missed first is one `by (nemo_inference_slo_result)`
/// away.
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct GoodputMetrics {
    /// Requests judged against their latency objectives (NEMO_LENS_SLO, aiperf's --goodput syntax), by result: met every objective, failed, or the objective missed first.
    #[counter("nemo.inference.requests.judged", unit = "{request}")]
    pub requests: Option<u64>,

    /// `met`, `error` (failed, refused or cancelled), or the objective missed
    /// first: `ttft`, `itl`, `e2e` or `tps`.
    #[attribute("nemo.inference.slo.result")]
    pub result: Option<StringValue>,

    /// The requested model, attached as `gen_ai.request.model` when set.
    #[attribute("gen_ai.request.model")]
    pub model: Option<StringValue>,
}

impl GoodputMetrics {
    /// One request judged `verdict`, for `model`.
    pub fn judged(verdict: Verdict, model: Option<StringValue>) -> Self {
        GoodputMetrics {
            requests: Some(1),
            result: Some(StringValue::from(verdict.as_str())),
            model,
        }
    }
}

/// Judges `served` against the objectives `meter` carries for `model` and
/// counts the verdict in `nemo.inference.requests.judged`; `None`, at the
/// cost of one branch, when the meter judges nothing for that model.
///
/// ```
/// use std::time::Duration;
/// use nemo_lens::instruments::goodput;
/// use nemo_lens::slo::{Objectives, Served, Verdict};
/// use nemo_lens::testing::Capture;
///
/// let capture = Capture::new();
/// let slo = "time_to_first_token:300 request_latency:3000".parse().unwrap();
/// let meter = capture.meter().with_objectives(Objectives::new(slo));
/// let served = Served::ok(Duration::from_millis(1200))
///     .time_to_first_token(Duration::from_millis(450))
///     .output_tokens(64);
/// let verdict = goodput::judge(&meter, None, &served);
/// assert_eq!(verdict, Some(Verdict::Missed(nemo_lens::slo::ObjectiveKind::TimeToFirstToken)));
/// let judged = "nemo.inference.requests.judged";
/// assert_eq!(capture.sum(judged, &[("nemo.inference.slo.result", "ttft")]), Some(1.0));
/// ```
pub fn judge(meter: &Meter, model: Option<&StringValue>, served: &Served) -> Option<Verdict> {
    let slo = meter
        .objectives()?
        .for_model(model.map(StringValue::as_str))?;
    let verdict = slo.judge(served);
    GoodputMetrics::judged(verdict, model.cloned()).record(meter);
    Some(verdict)
}
