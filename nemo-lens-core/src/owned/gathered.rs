//! Families another metrics library keeps (a `prometheus` or
//! `prometheus-client` registry), read by the exporters at each scrape and
//! each export beside nemo-lens's own series. The library keeps its values;
//! nemo-lens only gathers them, so nothing is added to the application's
//! recording path. Public for `nemo_lens::registry_bridge`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::InstrumentationScope;

/// A source of families gathered at every collection: one per bridged
/// registry.
pub trait Gather: Send + Sync + 'static {
    /// The instrumentation scope its families go out under over OTLP.
    fn scope(&self) -> &InstrumentationScope;
    /// Every family now, named as on a Prometheus endpoint.
    fn gather(&self) -> Vec<GatheredFamily>;
    /// Every family now in the text format (0.0.4), when the source writes
    /// that itself: a text scrape then copies it, resource labels added,
    /// rather than reading [`gather`](Self::gather)'s families and writing
    /// them again.
    fn text(&self) -> Option<String> {
        None
    }
}

/// The Prometheus type of a gathered family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatheredKind {
    /// A monotonic count.
    Counter,
    /// A value that goes up and down; also an info family's `1`.
    Gauge,
    /// A value of no stated type.
    Untyped,
    /// Explicit buckets.
    Histogram,
    /// Quantiles with a sum and a count.
    Summary,
}

impl GatheredKind {
    /// The kind a `# TYPE` line names (`counter`, `gauge`, `histogram`,
    /// `summary`); any other word is untyped, as Prometheus reads it.
    pub fn from_type(word: &str) -> Self {
        match word {
            "counter" => GatheredKind::Counter,
            "gauge" => GatheredKind::Gauge,
            "histogram" => GatheredKind::Histogram,
            "summary" => GatheredKind::Summary,
            _ => GatheredKind::Untyped,
        }
    }
}

/// One family: every series of one name.
#[derive(Debug, Clone, PartialEq)]
pub struct GatheredFamily {
    /// The name its samples have on a Prometheus endpoint (`_total`,
    /// `_info` or a unit suffix included, as the library writes it).
    pub name: String,
    /// Its HELP text, unescaped.
    pub help: String,
    /// Its unit in UCUM (`s`, `By`), empty when it has none.
    pub unit: String,
    /// Its type.
    pub kind: GatheredKind,
    /// Its series.
    pub series: Vec<GatheredSeries>,
}

/// One series of a gathered family.
#[derive(Debug, Clone, PartialEq)]
pub struct GatheredSeries {
    /// Label names and values, in the library's order.
    pub labels: Vec<(String, String)>,
    /// Its value now.
    pub value: GatheredValue,
    /// When nemo-lens first gathered it: the start of its cumulative
    /// values. Filled in by the registry.
    pub start: Option<SystemTime>,
    /// Whether this is the series the ones past the cardinality limit were
    /// merged into (exported with `otel.metric.overflow=true`).
    pub overflow: bool,
}

impl GatheredValue {
    /// What a counter or histogram gained since `before`, or `None` when
    /// it went down (a reset: the value is then what it gained since), or
    /// when the two readings are not of one shape.
    pub(crate) fn since(&self, before: &GatheredValue) -> Option<GatheredValue> {
        match (self, before) {
            (GatheredValue::Number(now), GatheredValue::Number(then)) => {
                (now >= then).then(|| GatheredValue::Number(now - then))
            }
            (
                GatheredValue::Histogram {
                    count,
                    sum,
                    buckets,
                },
                GatheredValue::Histogram {
                    count: count_then,
                    sum: sum_then,
                    buckets: buckets_then,
                },
            ) => {
                let same_bounds = buckets.len() == buckets_then.len()
                    && buckets.iter().zip(buckets_then).all(|(a, b)| a.0 == b.0);
                let grew = count >= count_then
                    && buckets.iter().zip(buckets_then).all(|(a, b)| a.1 >= b.1);
                (same_bounds && grew).then(|| GatheredValue::Histogram {
                    count: count - count_then,
                    sum: sum - sum_then,
                    buckets: buckets
                        .iter()
                        .zip(buckets_then)
                        .map(|(now, then)| (now.0, now.1 - then.1))
                        .collect(),
                })
            }
            _ => None,
        }
    }
}

impl GatheredSeries {
    /// A series with `labels` and `value`.
    pub fn new(labels: Vec<(String, String)>, value: GatheredValue) -> Self {
        GatheredSeries {
            labels,
            value,
            start: None,
            overflow: false,
        }
    }
}

/// The value of a gathered series.
#[derive(Debug, Clone, PartialEq)]
pub enum GatheredValue {
    /// A counter's, gauge's or untyped family's value.
    Number(f64),
    /// Explicit buckets: `(upper bound, cumulative count)`, `+Inf` left
    /// out (it is `count`).
    Histogram {
        /// Observations in all.
        count: u64,
        /// Their sum.
        sum: f64,
        /// Cumulative counts by upper bound.
        buckets: Vec<(f64, u64)>,
    },
    /// `(quantile, value)` pairs with the sum and count.
    Summary {
        /// The quantiles.
        quantiles: Vec<(f64, f64)>,
        /// Sum of the observations.
        sum: f64,
        /// How many there were.
        count: u64,
    },
}

impl GatheredValue {
    /// A histogram's bounds and its count per bucket, as OpenTelemetry
    /// counts them: Prometheus's cumulative counts de-cumulated, and what
    /// the last bound leaves of the count as the overflow (`+Inf`) bucket.
    /// `None` for any other value.
    pub fn per_bucket(&self) -> Option<(Vec<f64>, Vec<u64>)> {
        let GatheredValue::Histogram { count, buckets, .. } = self else {
            return None;
        };
        let mut below = 0;
        let mut counts: Vec<u64> = buckets
            .iter()
            .map(|(_, cumulative)| {
                let in_bucket = cumulative.saturating_sub(below);
                below = below.max(*cumulative);
                in_bucket
            })
            .collect();
        counts.push(count.saturating_sub(below));
        Some((buckets.iter().map(|(bound, _)| *bound).collect(), counts))
    }

    /// Adds `other` into `self`, for the overflow series: numbers and
    /// counts add up; buckets add up when the bounds agree, else `other`'s
    /// observations count only towards `+Inf`; quantiles cannot be merged
    /// and are dropped.
    fn absorb(&mut self, other: &GatheredValue) {
        match (self, other) {
            (GatheredValue::Number(a), GatheredValue::Number(b)) => *a += b,
            (
                GatheredValue::Histogram {
                    count,
                    sum,
                    buckets,
                },
                GatheredValue::Histogram {
                    count: c,
                    sum: s,
                    buckets: b,
                },
            ) => {
                *count += c;
                *sum += s;
                let same_bounds =
                    buckets.len() == b.len() && buckets.iter().zip(b).all(|(x, y)| x.0 == y.0);
                if same_bounds {
                    for (mine, theirs) in buckets.iter_mut().zip(b) {
                        mine.1 += theirs.1;
                    }
                }
            }
            (
                GatheredValue::Summary {
                    quantiles,
                    sum,
                    count,
                },
                GatheredValue::Summary {
                    sum: s, count: c, ..
                },
            ) => {
                quantiles.clear();
                *sum += s;
                *count += c;
            }
            // A family's series all have its kind's value.
            _ => {}
        }
    }
}

/// The families of one source at one collection.
#[derive(Debug, Clone, PartialEq)]
pub struct GatheredScope {
    /// The source's instrumentation scope.
    pub scope: InstrumentationScope,
    /// Its families, each within the cardinality limit.
    pub families: Vec<GatheredFamily>,
    /// For a text scrape, its families as the source wrote them, when it
    /// did and each is within the limit (then `families` is empty).
    pub text: Vec<TextBlock>,
}

/// One family's lines (`# HELP`, `# TYPE` and its samples) in a text
/// exposition.
#[derive(Debug, Clone, PartialEq)]
pub struct TextBlock {
    /// The family name, as its `TYPE` line has it.
    pub name: String,
    /// The family type.
    pub kind: GatheredKind,
    /// Its lines, each ending in `\n`.
    pub text: String,
    /// Its series: sample lines, or `_count` lines for a histogram or
    /// summary.
    pub series: usize,
}

type Labels = Vec<(String, String)>;

/// What the registry remembers of one gathered family between collections:
/// the label sets admitted under the cardinality limit and when each was
/// first seen.
#[derive(Debug, Default)]
struct FamilyState {
    admitted: HashMap<Labels, SystemTime>,
    overflow_start: Option<SystemTime>,
}

/// The gathered families' memory, keyed by source and family name.
#[derive(Default)]
pub(super) struct Gathering {
    pub(super) sources: Vec<Arc<dyn Gather>>,
    families: HashMap<(usize, String), FamilyState>,
    /// Family names found in two sources, already warned about.
    pub(super) repeated: std::collections::HashSet<String>,
}

/// Keeps each family name to the first source that has it: one registry
/// installed twice, or one family in two registries, is exported once, on
/// text, protobuf and OTLP alike. A name left out is warned about once.
pub(super) fn once(scopes: &mut [GatheredScope], repeated: &mut std::collections::HashSet<String>) {
    let mut seen = std::collections::HashSet::new();
    let mut first = |name: &str| {
        if seen.insert(name.to_owned()) {
            return true;
        }
        if repeated.insert(name.to_owned()) {
            crate::warnings::emit(crate::warnings::Warning::NameConflict, || {
                tracing::warn!(
                    target: "nemo_lens",
                    family = %name,
                    "the family {name} is in two bridged registries (one registry installed \
                     twice, or one name registered in two): the first one's is exported, the \
                     other left out"
                )
            });
        }
        false
    };
    for scope in scopes {
        scope.families.retain(|family| first(&family.name));
        scope.text.retain(|block| first(&block.name));
    }
}

/// Says once per name that a bridged family is left out because one of
/// nemo-lens's own instruments (or the metrics bridge's) exports that
/// Prometheus name: the instrument's is exported, the same rule on text,
/// protobuf and OTLP.
pub fn warn_shadowed(name: &str) {
    static SAID: std::sync::Mutex<Option<std::collections::HashSet<String>>> =
        std::sync::Mutex::new(None);
    let first = SAID
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get_or_insert_with(Default::default)
        .insert(name.to_owned());
    if first {
        crate::warnings::emit(crate::warnings::Warning::NameConflict, || {
            tracing::warn!(
                target: "nemo_lens",
                family = %name,
                "the bridged family {name} has the name of a nemo-lens instrument's family: \
                 the instrument's is exported and the bridged one left out; rename one of them"
            )
        });
    }
}

impl Gathering {
    /// Whether family `name` of source `source`, with `series` series now,
    /// is within `limit` and never went past it (so it needs no overflow
    /// series).
    #[cfg(any(feature = "prometheus", feature = "testing"))]
    pub(super) fn within(&self, source: usize, name: &str, series: usize, limit: usize) -> bool {
        series <= limit
            && self
                .families
                .get(&(source, name.to_owned()))
                .is_none_or(|state| state.overflow_start.is_none())
    }

    /// Gives each series of `family` (of source `source`) its start time,
    /// and merges the series past `limit` label sets into one overflow
    /// series, warning once per family.
    pub(super) fn limit(
        &mut self,
        source: usize,
        family: &mut GatheredFamily,
        limit: usize,
        now: SystemTime,
    ) {
        let state = self
            .families
            .entry((source, family.name.clone()))
            .or_default();
        let mut overflow: Option<GatheredValue> = None;
        family.series.retain_mut(|series| {
            let admitted = state.admitted.len();
            if let Some(start) = state.admitted.get(series.labels.as_slice()) {
                series.start = Some(*start);
                return true;
            }
            if admitted < limit {
                state.admitted.insert(series.labels.clone(), now);
                series.start = Some(now);
                return true;
            }
            match &mut overflow {
                Some(merged) => merged.absorb(&series.value),
                None => overflow = Some(series.value.clone()),
            }
            false
        });
        if let Some(value) = overflow {
            family.series.push(GatheredSeries {
                labels: Vec::new(),
                value,
                start: Some(*state.overflow_start.get_or_insert(now)),
                overflow: true,
            });
            crate::overflow::warn_once(family.name.clone());
        }
    }
}

impl std::fmt::Debug for Gathering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gathering")
            .field("sources", &self.sources.len())
            .field("families", &self.families.len())
            .finish()
    }
}
