//! `nemo-lens rules --slo`: recording rules and multi-window, multi-burn-rate
//! alerts (the SRE workbook's, chapter 5) on goodput, an availability-style
//! SLO whose "errors" are the requests that missed an objective.
//!
//! - On the goodput counter (`nemo.inference.requests.judged`, which a
//!   service counts with `NEMO_LENS_SLO` set): the share of judged requests
//!   that were not good, over each alert window.
//! - On a latency histogram, for engines that count no goodput (vLLM, or
//!   a nemo-lens service without objectives): the share of requests slower
//!   than each objective's target, one objective at a time, from the bucket
//!   whose bound is the target. A joint condition ("met every objective")
//!   cannot be read from two histograms; each objective gets its own
//!   budget.

use nemo_lens::slo::{ObjectiveKind, Slo};

use crate::promql;
use crate::rules::{camel, AlertRule, RecordingRule};
use crate::sets::Instrument;

/// The SRE workbook's alerts for a 30-day budget: (severity, burn rate,
/// long window, short window). The rates spend 2 % of the budget in an
/// hour, 5 % in six hours (pages), 10 % in a day and 10 % in three days
/// (tickets).
pub const BURN_ALERTS: [(&str, f64, &str, &str); 4] = [
    ("page", 14.4, "1h", "5m"),
    ("page", 6.0, "6h", "30m"),
    ("ticket", 3.0, "1d", "2h"),
    ("ticket", 1.0, "3d", "6h"),
];

/// The windows the error ratios are recorded over.
const WINDOWS: [&str; 7] = ["5m", "30m", "1h", "2h", "6h", "1d", "3d"];

/// An engine whose latency histograms stand in for a goodput counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A nemo-lens service's `gen_ai.server.*` histograms.
    NemoLens,
    /// vLLM's `vllm:*_seconds` histograms (V1, 0.7 to 0.34).
    Vllm,
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct GoodputPolicy {
    /// The objectives, in aiperf's `--goodput` syntax.
    pub slo: Slo,
    /// The share of requests that must be good, e.g. 0.99.
    pub objective: f64,
    /// The SLO window the remaining budget is read over, e.g. `28d`.
    pub window: String,
    /// Histogram rules for an engine that counts no goodput, as well.
    pub engine: Option<Engine>,
}

/// The rules of one SLO: what is recorded and what alerts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoodputRules {
    /// Error ratios per window, and the remaining budget.
    pub recording: Vec<RecordingRule>,
    /// The burn-rate alerts.
    pub alerts: Vec<AlertRule>,
}

/// One histogram of an engine: its bucket and count samples, the labels
/// rules group by, and its bounds in seconds.
struct Histogram {
    bucket: String,
    count: String,
    group: Vec<String>,
    bounds: Vec<f64>,
}

const VLLM_TTFT: [f64; 22] = [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];
const VLLM_TPOT: [f64; 19] = [
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
    40.0, 80.0,
];
const VLLM_E2E: [f64; 21] = [
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
    480.0, 960.0, 1920.0, 7680.0,
];

impl Engine {
    /// The histogram an objective of `kind` is read from. Inter-token
    /// latency (and throughput per user, its inverse) is the per-request
    /// time per output token, aiperf's ITL of one request.
    fn histogram(self, kind: ObjectiveKind, sets: &[Instrument]) -> Option<Histogram> {
        let time_per_token = matches!(
            kind,
            ObjectiveKind::InterTokenLatency | ObjectiveKind::OutputTokenThroughputPerUser
        );
        match self {
            Engine::Vllm => {
                let (name, bounds): (&str, &[f64]) = match kind {
                    ObjectiveKind::TimeToFirstToken => ("time_to_first_token", &VLLM_TTFT),
                    ObjectiveKind::RequestLatency => ("e2e_request_latency", &VLLM_E2E),
                    _ if time_per_token => ("request_time_per_output_token", &VLLM_TPOT),
                    _ => return None,
                };
                Some(Histogram {
                    bucket: format!("vllm:{name}_seconds_bucket"),
                    count: format!("vllm:{name}_seconds_count"),
                    group: vec!["job".to_owned(), "model_name".to_owned()],
                    bounds: bounds.to_vec(),
                })
            }
            Engine::NemoLens => {
                let name = match kind {
                    ObjectiveKind::TimeToFirstToken => "gen_ai.server.time_to_first_token",
                    ObjectiveKind::RequestLatency => "gen_ai.server.request.duration",
                    _ if time_per_token => "gen_ai.server.time_per_output_token",
                    _ => return None,
                };
                let i = sets.iter().find(|i| i.name == name)?;
                Some(Histogram {
                    bucket: i.prometheus.bucket()?.to_owned(),
                    count: i.prometheus.count()?.to_owned(),
                    group: vec!["service_name".to_owned()],
                    bounds: i.buckets?.to_vec(),
                })
            }
        }
    }
}

/// The target of an objective as a latency ceiling in seconds: throughput
/// per user at least X tokens/s is an inter-token latency of at most 1/X s.
fn ceiling_s(kind: ObjectiveKind, target: f64) -> f64 {
    match kind {
        ObjectiveKind::OutputTokenThroughputPerUser => 1.0 / target,
        _ => target / 1000.0,
    }
}

/// The `le` matcher of bound `bound`, whichever way the exposition writes
/// it (`1` by nemo-lens, `1.0` by Python's client).
fn le_matcher(bound: f64) -> String {
    let written = format!("{bound}");
    if bound.fract() == 0.0 {
        format!("le=~\"{written}|{written}\\\\.0\"")
    } else {
        format!("le=\"{written}\"")
    }
}

/// Rules for `policy`: `judged` is the goodput counter as the sets declare
/// it, `instruments` every built-in instrument (for the nemo-lens
/// histograms' names and bounds).
///
/// # Errors
///
/// An objective not in (0, 1), or a target that is no bucket bound of the
/// engine's histogram (naming the nearest bounds).
pub fn goodput_rules(
    policy: &GoodputPolicy,
    judged: &Instrument,
    instruments: &[Instrument],
) -> Result<GoodputRules, String> {
    if !(policy.objective > 0.0 && policy.objective < 1.0) {
        return Err(format!(
            "--objective must be a share between 0 and 1 (0.99 for 99 %), not {}",
            policy.objective
        ));
    }
    let budget = round(1.0 - policy.objective);
    let mut rules = GoodputRules::default();
    let by_service = vec!["service_name".to_owned()];
    let counter = &judged.prometheus.family;
    rules.add(
        "goodput",
        "requests that missed an objective (nemo.inference.requests.judged)",
        budget,
        policy,
        |window| promql::goodput_error_ratio(counter, "", window, &by_service),
    );
    if let Some(engine) = policy.engine {
        for objective in policy.slo.objectives() {
            let kind = objective.kind;
            let histogram = engine
                .histogram(kind, instruments)
                .ok_or_else(|| format!("no histogram of {engine:?} measures {}", kind.key()))?;
            let ceiling = ceiling_s(kind, objective.target);
            let bound = histogram
                .bounds
                .iter()
                .copied()
                .find(|b| (b - ceiling).abs() <= 1e-9 * ceiling.max(1.0))
                .ok_or_else(|| refused(kind, objective.target, ceiling, &histogram))?;
            let le = le_matcher(bound);
            let what = format!(
                "requests over {} {} ({})",
                objective.target,
                kind.unit(),
                histogram.count
            );
            rules.add(kind.short(), &what, budget, policy, |window| {
                format!(
                    "(1 - ({} / {}))",
                    promql::rate(&histogram.bucket, &le, window, &histogram.group),
                    promql::rate(&histogram.count, "", window, &histogram.group)
                )
            });
        }
    }
    Ok(rules)
}

/// A target between bucket bounds cannot be read from the histogram.
fn refused(kind: ObjectiveKind, target: f64, ceiling: f64, histogram: &Histogram) -> String {
    let below = histogram.bounds.iter().copied().rfind(|b| *b < ceiling);
    let above = histogram.bounds.iter().copied().find(|b| *b > ceiling);
    let in_unit = |b: f64| match kind {
        ObjectiveKind::OutputTokenThroughputPerUser => format!("{}", 1.0 / b),
        _ => format!("{}", b * 1000.0),
    };
    let nearest: Vec<String> = below.into_iter().chain(above).map(in_unit).collect();
    format!(
        "{}:{target} is not a bucket bound of {}, so the share of requests within it cannot be \
         read; the nearest bounds are {} ({})",
        kind.key(),
        histogram.count.trim_end_matches("_count"),
        nearest.join(" and "),
        kind.unit()
    )
}

impl GoodputRules {
    /// The error ratio `ratio(window)` of `tag` over every window, the
    /// budget left over the SLO window, and the four burn-rate alerts.
    fn add(
        &mut self,
        tag: &str,
        what: &str,
        budget: f64,
        policy: &GoodputPolicy,
        ratio: impl Fn(&str) -> String,
    ) {
        let record = |window: &str| format!("nemo_lens:slo_{tag}_error_ratio:rate{window}");
        for window in WINDOWS.iter().copied().chain([policy.window.as_str()]) {
            let name = record(window);
            if !self.recording.iter().any(|r| r.record == name) {
                self.recording.push(RecordingRule {
                    record: name,
                    expr: ratio(window),
                });
            }
        }
        self.recording.push(RecordingRule {
            record: format!(
                "nemo_lens:slo_{tag}_error_budget_remaining:{}",
                policy.window
            ),
            expr: format!("1 - {} / {budget}", record(&policy.window)),
        });
        for (severity, rate, long, short) in BURN_ALERTS {
            let threshold = round(rate * budget);
            self.alerts.push(AlertRule {
                alert: format!("NemoLensSlo{}BudgetBurn{long}", camel(tag)),
                measure: record(long),
                condition: format!("> {threshold} and {} > {threshold}", record(short)),
                for_: "2m".to_owned(),
                severity,
                summary: format!(
                    "The {tag} error budget burns at {rate}x over {long} and {short}"
                ),
                description: format!(
                    "The share of {what} is above {rate} x (1 - {}) over both {long} and {short}: at \
                     this rate the budget of `{}` over {} is spent early. The objectives: `{}`.",
                    policy.objective, tag, policy.window, policy.slo
                ),
            });
        }
    }
}

/// `x` without the float noise of its arithmetic (0.144, not
/// 0.14400000000000002).
fn round(x: f64) -> f64 {
    (x * 1e12).round() / 1e12
}
