//! Rates and percentiles between two reads of a replica, and the same for
//! all replicas together (sums, and histograms merged before their
//! percentiles are taken).

use super::distribution::Distribution;
use super::reading::{HistogramSeries, Replica};

/// p50, p95 and p99.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Percentiles {
    /// The median.
    pub p50: Option<f64>,
    /// The 95th percentile.
    pub p95: Option<f64>,
    /// The 99th percentile.
    pub p99: Option<f64>,
}

impl Percentiles {
    /// The percentiles of `distribution`, all `None` without one.
    pub fn of(distribution: Option<&Distribution>) -> Percentiles {
        let q = |q| distribution.and_then(|d| d.quantile(q));
        Percentiles {
            p50: q(0.5),
            p95: q(0.95),
            p99: q(0.99),
        }
    }
}

/// A replica's signals over an interval; `None` where its vocabulary has
/// no such signal (or, for rates, where there was no earlier read).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Requests running.
    pub running: Option<f64>,
    /// Requests waiting.
    pub waiting: Option<f64>,
    /// KV-cache use, 0 to 1 (the mean over replicas for all).
    pub kv_cache_usage: Option<f64>,
    /// Requests finished per second.
    pub requests_per_s: Option<f64>,
    /// Input tokens per second.
    pub input_tokens_per_s: Option<f64>,
    /// Output tokens per second.
    pub output_tokens_per_s: Option<f64>,
    /// Failed requests over requests; `None` with no request.
    pub error_rate: Option<f64>,
    /// Time to first token over the interval.
    pub ttft: Option<Distribution>,
    /// Time per output token over the interval.
    pub tpot: Option<Distribution>,
    /// Requests and errors counted in the interval, for merging rates.
    pub requests: Option<f64>,
    /// Failed requests (a total in a reading, a count in stats).
    pub errors: Option<f64>,
    /// Of the requests judged against latency objectives in the interval,
    /// the share that met every one; `None` where nothing was judged.
    pub goodput: Option<f64>,
    /// Requests judged and good in the interval, for merging.
    pub judged: Option<f64>,
    /// Requests that met every objective in the interval.
    pub good: Option<f64>,
}

impl Stats {
    /// Between `before` (`seconds` earlier) and `now`.
    pub fn between(before: Option<&Replica>, now: &Replica, seconds: f64) -> Stats {
        let gained = |then: Option<f64>, now: Option<f64>| {
            let now = now?;
            let then = then?;
            // A counter lower than before restarted: all of it is new.
            Some(if now >= then { now - then } else { now })
        };
        let rate = |then: Option<f64>, now: Option<f64>| {
            (seconds > 0.0)
                .then(|| gained(then, now).map(|g| g / seconds))
                .flatten()
        };
        let b = before;
        let requests = gained(b.and_then(|r| r.requests), now.requests);
        let errors = gained(b.and_then(|r| r.errors), now.errors);
        let judged = gained(b.and_then(|r| r.judged), now.judged);
        // The `met` series appears with the first good request: absent, 0.
        let good = judged.and_then(|_| {
            gained(
                b.map(|r| r.good.unwrap_or(0.0)),
                Some(now.good.unwrap_or(0.0)),
            )
        });
        Stats {
            running: now.running,
            waiting: now.waiting,
            kv_cache_usage: now.kv_cache,
            requests_per_s: rate(b.and_then(|r| r.requests), now.requests),
            input_tokens_per_s: rate(b.and_then(|r| r.input_tokens), now.input_tokens),
            output_tokens_per_s: rate(b.and_then(|r| r.output_tokens), now.output_tokens),
            error_rate: match (errors, requests) {
                (Some(e), Some(r)) if r > 0.0 => Some((e / r).min(1.0)),
                _ => None,
            },
            ttft: distribution(
                b.and_then(|r| r.ttft.as_ref()),
                now.ttft.as_ref(),
                b.is_some(),
            ),
            tpot: distribution(
                b.and_then(|r| r.tpot.as_ref()),
                now.tpot.as_ref(),
                b.is_some(),
            ),
            requests,
            errors,
            goodput: share(good, judged),
            judged,
            good,
        }
    }

    /// All of `parts` together: gauges and rates summed (KV-cache use
    /// averaged), histograms merged.
    pub fn all<'a>(parts: impl IntoIterator<Item = &'a Stats> + Clone) -> Stats {
        let sum = |f: fn(&Stats) -> Option<f64>| {
            parts
                .clone()
                .into_iter()
                .filter_map(f)
                .fold(None, |acc: Option<f64>, v| Some(acc.unwrap_or(0.0) + v))
        };
        let kv: Vec<f64> = parts
            .clone()
            .into_iter()
            .filter_map(|s| s.kv_cache_usage)
            .collect();
        let merged = |f: fn(&Stats) -> Option<&Distribution>| {
            let found: Vec<&Distribution> = parts.clone().into_iter().filter_map(f).collect();
            (!found.is_empty()).then(|| Distribution::merge(found))
        };
        let requests = sum(|s| s.requests);
        let errors = sum(|s| s.errors);
        let (judged, good) = (sum(|s| s.judged), sum(|s| s.good));
        Stats {
            running: sum(|s| s.running),
            waiting: sum(|s| s.waiting),
            kv_cache_usage: (!kv.is_empty()).then(|| kv.iter().sum::<f64>() / kv.len() as f64),
            requests_per_s: sum(|s| s.requests_per_s),
            input_tokens_per_s: sum(|s| s.input_tokens_per_s),
            output_tokens_per_s: sum(|s| s.output_tokens_per_s),
            error_rate: match (errors, requests) {
                (Some(e), Some(r)) if r > 0.0 => Some((e / r).min(1.0)),
                _ => None,
            },
            ttft: merged(|s| s.ttft.as_ref()),
            tpot: merged(|s| s.tpot.as_ref()),
            requests,
            errors,
            goodput: share(good, judged),
            judged,
            good,
        }
    }
}

/// `part` over `whole`; `None` with nothing in the whole.
fn share(part: Option<f64>, whole: Option<f64>) -> Option<f64> {
    match (part, whole) {
        (Some(p), Some(w)) if w > 0.0 => Some((p / w).min(1.0)),
        _ => None,
    }
}

/// What a replica's histogram series gained, merged; with no earlier read,
/// nothing to show for an interval.
fn distribution(
    before: Option<&HistogramSeries>,
    now: Option<&HistogramSeries>,
    had_before: bool,
) -> Option<Distribution> {
    let now = now?;
    if !had_before {
        return None;
    }
    let parts: Vec<Distribution> = now
        .iter()
        .filter_map(|(labels, value)| {
            Distribution::between(before.and_then(|b| b.get(labels)), value)
        })
        .collect();
    Some(Distribution::merge(&parts))
}
