//! `top --slo`: each latency objective's attainment over the interval,
//! estimated from the bucket deltas of the histogram that measures it, for
//! any engine. A joint "met every objective" cannot be read from separate
//! histograms; a service that counts goodput shows it in its own column.

use nemo_lens::slo::{Objective, ObjectiveKind, Slo};
use serde_json::{json, Value};

use super::distribution::{Distribution, Within};
use super::stats::Stats;

/// One objective's attainment, or why it cannot be estimated.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The objective, as `key:target`.
    pub objective: String,
    /// The share of requests within it, with its range.
    pub within: Option<Within>,
    /// Why there is no estimate.
    pub why: Option<&'static str>,
}

/// Every objective of `slo` on `stats`. Time to first token is read from
/// the TTFT histogram, inter-token latency (and throughput per user, its
/// inverse) from the time per output token; request latency has no
/// histogram in top's vocabularies.
pub fn estimates(slo: &Slo, stats: &Stats) -> Vec<Estimate> {
    slo.objectives()
        .iter()
        .map(|objective| estimate(objective, stats))
        .collect()
}

fn estimate(objective: &Objective, stats: &Stats) -> Estimate {
    let (histogram, seconds): (Option<&Distribution>, f64) = match objective.kind {
        ObjectiveKind::TimeToFirstToken => (stats.ttft.as_ref(), objective.target / 1000.0),
        ObjectiveKind::InterTokenLatency => (stats.tpot.as_ref(), objective.target / 1000.0),
        ObjectiveKind::OutputTokenThroughputPerUser => {
            (stats.tpot.as_ref(), 1.0 / objective.target)
        }
        _ => (None, 0.0),
    };
    let objective_text = format!("{}:{}", objective.kind.key(), objective.target);
    let why = match (objective.kind, histogram) {
        (ObjectiveKind::RequestLatency, _) => Some("top reads no request-latency histogram"),
        (_, None) => Some("the endpoint exports no such histogram"),
        (_, Some(_)) => None,
    };
    let within = histogram.and_then(|h| h.share_within(seconds));
    Estimate {
        objective: objective_text,
        why: why.or(within.is_none().then_some("no request in the interval")),
        within,
    }
}

/// The estimates as JSON: `{"objective", "attainment", "low", "high"}`, or
/// `"why"` in place of the numbers.
pub fn json(estimates: &[Estimate]) -> Value {
    Value::Array(
        estimates
            .iter()
            .map(|e| match e.within {
                Some(w) => json!({
                    "objective": e.objective,
                    "attainment": w.estimate,
                    "low": w.low,
                    "high": w.high,
                }),
                None => json!({ "objective": e.objective, "attainment": null, "why": e.why }),
            })
            .collect(),
    )
}

/// One line per estimate: `time_to_first_token:300 82.0 % (75.0 to 85.0 %)`,
/// the range given only when the target is between bucket bounds.
pub fn text(estimates: &[Estimate]) -> String {
    estimates
        .iter()
        .map(|e| match e.within {
            Some(w) if w.high - w.low > 1e-12 => format!(
                "{} {:.1} % (between {:.1} and {:.1} %: the target lies between bucket bounds)",
                e.objective,
                w.estimate * 100.0,
                w.low * 100.0,
                w.high * 100.0
            ),
            Some(w) => format!("{} {:.1} %", e.objective, w.estimate * 100.0),
            None => format!("{} unknown ({})", e.objective, e.why.unwrap_or("")),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
