//! What one read of an endpoint says, per replica, in one vocabulary: the
//! numbers `top` shows, before rates and percentiles.

use std::collections::BTreeMap;

use super::exposition::{Exposition, Labels, Value};
use super::vocabulary::{normalise_dynamo_prefix, recognise, Filter, Source, Vocabulary};

/// Histogram series by labels.
pub type HistogramSeries = BTreeMap<Labels, Value>;

/// One replica's numbers at one read; `None` where the vocabulary has no
/// such signal or the endpoint does not export it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replica {
    /// Requests running.
    pub running: Option<f64>,
    /// Requests waiting.
    pub waiting: Option<f64>,
    /// KV-cache use, 0 to 1.
    pub kv_cache: Option<f64>,
    /// Totals: rates come from two reads.
    pub requests: Option<f64>,
    /// Failed requests (a total in a reading, a count in stats).
    pub errors: Option<f64>,
    /// Input (prompt) tokens, a total.
    pub input_tokens: Option<f64>,
    /// Output (generated) tokens, a total.
    pub output_tokens: Option<f64>,
    /// Requests refused before they started, a total (also counted in
    /// `requests` and `errors`).
    pub rejected: Option<f64>,
    /// Time to first token, in seconds.
    pub ttft: Option<HistogramSeries>,
    /// Time per output token, in seconds.
    pub tpot: Option<HistogramSeries>,
    /// Requests judged against latency objectives, a total: a nemo-lens
    /// service's goodput counter, whatever else it exports.
    pub judged: Option<f64>,
    /// Those that met every objective, a total.
    pub good: Option<f64>,
}

/// One read of one endpoint.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// The vocabulary recognised, if any.
    pub vocabulary: Option<&'static str>,
    /// By replica label value (`""` for an endpoint that is one replica).
    pub replicas: BTreeMap<String, Replica>,
}

impl Reading {
    /// The serving signals of `exposition`.
    pub fn of(exposition: &Exposition) -> Reading {
        let renamed;
        let (exposition, vocabulary) = match recognise(exposition) {
            Some(vocabulary) => (exposition, vocabulary),
            None => {
                renamed = normalise_dynamo_prefix(exposition);
                let Some(vocabulary) = recognise(&renamed) else {
                    return Reading::default();
                };
                (&*renamed, vocabulary)
            }
        };
        let replica_of = |labels: &Labels| {
            vocabulary
                .replica_label
                .and_then(|l| labels.get(l))
                .cloned()
                .unwrap_or_default()
        };
        let mut replicas: BTreeMap<String, Replica> = BTreeMap::new();
        for series in &exposition.series {
            replicas.entry(replica_of(&series.labels)).or_default();
        }
        replicas.entry(String::new()).or_default();
        for (name, replica) in &mut replicas {
            let mine = |labels: &Labels| replica_of(labels) == *name;
            *replica = read_replica(exposition, vocabulary, &mine);
        }
        // Series without the replica label (SGLang's tokenizer side, an
        // endpoint-wide gauge) complete the one replica there is, or make a
        // row of their own beside several.
        let endpoint_wide = replicas.remove("").unwrap_or_default();
        match replicas.len() {
            0 => {
                replicas.insert(String::new(), endpoint_wide);
            }
            1 => {
                if let Some(only) = replicas.values_mut().next() {
                    only.complete(endpoint_wide);
                }
            }
            _ if endpoint_wide != Replica::default() => {
                replicas.insert(String::new(), endpoint_wide);
            }
            _ => {}
        }
        for replica in replicas.values_mut() {
            replica.count_rejected();
        }
        Reading {
            vocabulary: Some(vocabulary.name),
            replicas,
        }
    }
}

fn read_replica(
    exposition: &Exposition,
    vocabulary: &Vocabulary,
    mine: &dyn Fn(&Labels) -> bool,
) -> Replica {
    let requests = number(exposition, vocabulary.requests, mine, Combine::Sum);
    Replica {
        running: number(exposition, vocabulary.running, mine, Combine::Sum),
        waiting: number(exposition, vocabulary.waiting, mine, Combine::Sum),
        kv_cache: number(exposition, vocabulary.kv_cache, mine, Combine::Max),
        requests,
        errors: errors(exposition, vocabulary, mine, requests),
        input_tokens: number(exposition, vocabulary.input_tokens, mine, Combine::Sum),
        output_tokens: number(exposition, vocabulary.output_tokens, mine, Combine::Sum),
        rejected: every(exposition, vocabulary.rejected, mine),
        ttft: histograms(exposition, vocabulary.ttft, mine),
        tpot: histograms(exposition, vocabulary.tpot, mine),
        judged: number(exposition, &[JUDGED], mine, Combine::Sum),
        good: number(exposition, &[GOOD], mine, Combine::Sum),
    }
}

/// nemo-lens's goodput counter (`nemo.inference.requests.judged`), all of
/// it and the requests that met every objective.
const JUDGED: Source = Source::Number("nemo_inference_requests_judged_total", Filter::All);
const GOOD: Source = Source::Number(
    "nemo_inference_requests_judged_total",
    Filter::Is("nemo_inference_slo_result", "met"),
);

impl Replica {
    /// Fills what this replica lacks from `other`.
    fn complete(&mut self, other: Replica) {
        let Replica {
            running,
            waiting,
            kv_cache,
            requests,
            errors,
            input_tokens,
            output_tokens,
            rejected,
            ttft,
            tpot,
            judged,
            good,
        } = other;
        self.rejected = add(self.rejected, rejected);
        self.running = self.running.or(running);
        self.waiting = self.waiting.or(waiting);
        self.kv_cache = self.kv_cache.or(kv_cache);
        self.requests = self.requests.or(requests);
        self.errors = self.errors.or(errors);
        self.input_tokens = self.input_tokens.or(input_tokens);
        self.output_tokens = self.output_tokens.or(output_tokens);
        self.ttft = self.ttft.take().or(ttft);
        self.tpot = self.tpot.take().or(tpot);
        self.judged = self.judged.or(judged);
        self.good = self.good.or(good);
    }

    /// Adds the requests refused at admission to requests and errors: a
    /// server refusing half its load fails half its requests.
    fn count_rejected(&mut self) {
        if let Some(rejected) = self.rejected {
            self.requests = add(self.requests, Some(rejected));
            self.errors = add(self.errors, Some(rejected));
        }
    }
}

fn add(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

/// The sum of every one of `sources` the endpoint has, over the replica's
/// series.
fn every(
    exposition: &Exposition,
    sources: &[Source],
    mine: &dyn Fn(&Labels) -> bool,
) -> Option<f64> {
    sources
        .iter()
        .map(|s| number(exposition, std::slice::from_ref(s), mine, Combine::Sum))
        .fold(None, add)
}

#[derive(Clone, Copy)]
enum Combine {
    Sum,
    Max,
}

/// The first of `sources` the endpoint has, over the replica's series.
fn number(
    exposition: &Exposition,
    sources: &[Source],
    mine: &dyn Fn(&Labels) -> bool,
    combine: Combine,
) -> Option<f64> {
    let source = sources.iter().find(|s| exposition.has(s.family()))?;
    let (family, filter) = match *source {
        Source::Number(f, filter) | Source::Count(f, filter) | Source::Sum(f, filter) => {
            (f, filter)
        }
    };
    // Absent for a replica none of whose series is in the family; 0 for
    // one whose series the filter leaves out (no failure yet).
    exposition.family(family).find(|s| mine(&s.labels))?;
    let values = exposition
        .family(family)
        .filter(|s| mine(&s.labels) && filter.keeps(&s.labels))
        .filter_map(|s| match (&s.value, source) {
            (Value::Number(v), Source::Number(..)) => Some(*v),
            (Value::Histogram { count, .. }, Source::Count(..)) => Some(*count),
            (Value::Histogram { sum, .. }, Source::Sum(..)) => Some(*sum),
            _ => None,
        });
    Some(match combine {
        Combine::Sum => values.sum(),
        Combine::Max => values.fold(f64::NAN, f64::max),
    })
    .filter(|v| !v.is_nan())
}

/// Errors: 0 when the endpoint counts requests but has had no failure yet
/// (the failure series appear with the first failure), absent when the
/// vocabulary cannot tell.
fn errors(
    exposition: &Exposition,
    vocabulary: &Vocabulary,
    mine: &dyn Fn(&Labels) -> bool,
    requests: Option<f64>,
) -> Option<f64> {
    number(exposition, vocabulary.errors, mine, Combine::Sum).or_else(|| {
        let counted = vocabulary.errors.iter().any(|s| {
            matches!(
                s,
                Source::Count(..) | Source::Number(_, Filter::Is(..) | Filter::Starts(..))
            )
        });
        (counted && requests.is_some()).then_some(0.0)
    })
}

fn histograms(
    exposition: &Exposition,
    families: &[&str],
    mine: &dyn Fn(&Labels) -> bool,
) -> Option<HistogramSeries> {
    let family = families.iter().find(|f| exposition.has(f))?;
    let series: HistogramSeries = exposition
        .family(family)
        .filter(|s| mine(&s.labels) && matches!(s.value, Value::Histogram { .. }))
        .map(|s| (s.labels.clone(), s.value.clone()))
        .collect();
    (!series.is_empty()).then_some(series)
}
