//! What one scrape holds: the SDK's collected metrics as Prometheus metric
//! families, named, labelled and sorted the way `opentelemetry-prometheus`
//! 0.33 does (this module follows its collector rule for rule, since the
//! names and labels are what dashboards query), plus exponential
//! histograms, which that crate drops.

use std::collections::{BTreeMap, HashMap};

use opentelemetry::{InstrumentationScope, Key, Value as OtelValue};
use opentelemetry_sdk::metrics::data::{
    AggregatedMetrics, Metric as OtelMetric, MetricData, ResourceMetrics,
};
use opentelemetry_sdk::Resource;

use nemo_lens_core::__internal::{bridge, warn_shadowed, warnings};
use nemo_lens_core::exemplar::Exemplar;
use nemo_lens_core::owned::{
    ExponentialPoint, GatheredKind, GatheredScope, GatheredValue, HistogramPoint, OwnedData,
    OwnedScope,
};
use nemo_lens_core::PrometheusResourceLabels;

const TARGET_INFO_NAME: &str = "target_info";
const TARGET_INFO_DESCRIPTION: &str = "Target metadata";
const SCOPE_NAME_LABEL: &str = "otel_scope_name";
const SCOPE_VERSION_LABEL: &str = "otel_scope_version";
const SCOPE_SCHEMA_URL_LABEL: &str = "otel_scope_schema_url";
const SCOPE_ATTRIBUTE_PREFIX: &str = "otel_scope_";

/// The Prometheus type of a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Counter,
    Gauge,
    Histogram,
    /// Bridged histograms a `metrics` facade user chose to summarise, and
    /// gathered summaries.
    Summary,
    /// Only families gathered from another library's registry.
    Untyped,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
            Kind::Summary => "summary",
            Kind::Untyped => "untyped",
        }
    }
}

/// One metric family: every series of one name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Family {
    pub name: String,
    pub help: String,
    pub kind: Kind,
    pub metrics: Vec<Series>,
    /// A gathered family's lines as its library wrote them, resource
    /// labels added, which a text scrape copies (`metrics` is then empty).
    pub raw: Option<String>,
}

/// One series: its labels and its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    pub labels: Vec<(String, String)>,
    pub value: Sample,
    /// A histogram's exemplars, oldest first (each exposition places them
    /// on the buckets their values fall in).
    pub exemplars: Vec<Exemplar>,
}

/// The value of a series.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Sample {
    Number(f64),
    /// Explicit buckets: `(upper bound, cumulative count)`, without `+Inf`.
    Histogram {
        count: u64,
        sum: f64,
        buckets: Vec<(f64, u64)>,
    },
    Exponential(Exponential),
    /// `(quantile, value)` pairs with the sum and count.
    Summary {
        quantiles: Vec<(f64, f64)>,
        sum: f64,
        count: u64,
    },
}

/// An OpenTelemetry base-2 exponential histogram point.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Exponential {
    pub count: u64,
    pub sum: f64,
    pub scale: i8,
    pub zero_count: u64,
    pub positive: Buckets,
    pub negative: Buckets,
}

/// One side of an exponential histogram: `counts[i]` counts values whose
/// magnitude is in `(2^((offset+i)/2^scale), 2^((offset+i+1)/2^scale)]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Buckets {
    pub offset: i32,
    pub counts: Vec<u64>,
}

/// What the collector remembers between scrapes: the first type and help
/// seen for each name, which later conflicting instruments defer to.
#[derive(Debug, Default)]
pub(crate) struct Known {
    families: HashMap<String, (Kind, String)>,
    target_info: Option<Family>,
    resource_labels: Option<Vec<(String, String)>>,
}

impl Known {
    /// The HELP of family `name` of type `kind`: the first seen (a bridged
    /// family's filled in when its facade description comes after the first
    /// scrape), else `described` from now on. `None`, with a warning, when
    /// the name already has another type: the second is not exported.
    fn help(
        &mut self,
        name: &str,
        kind: Kind,
        bridged: bool,
        described: impl FnOnce() -> String,
        bridge_help: &dyn Fn(&str) -> Option<String>,
    ) -> Option<String> {
        match self.families.get_mut(name) {
            Some((existing, _)) if *existing != kind => {
                warn_type_conflict(name);
                None
            }
            Some((_, help)) if bridged && help.is_empty() => {
                if let Some(described) = bridge_help(name) {
                    *help = described;
                }
                Some(help.clone())
            }
            Some((_, help)) => Some(help.clone()),
            None => {
                let help = described();
                self.families.insert(name.to_owned(), (kind, help.clone()));
                Some(help)
            }
        }
    }
}

/// The families of one collection, sorted by name, each series sorted by
/// its label values.
pub(crate) fn families(
    metrics: &ResourceMetrics,
    owned: &[OwnedScope],
    gathered: Vec<GatheredScope>,
    selection: &PrometheusResourceLabels,
    known: &mut Known,
) -> Vec<Family> {
    let mut by_name: BTreeMap<String, Family> = BTreeMap::new();
    let target_info = known
        .target_info
        .get_or_insert_with(|| target_info(metrics.resource()))
        .clone();
    if !metrics.resource().is_empty() {
        by_name.insert(target_info.name.clone(), target_info);
    }
    let resource_labels = known
        .resource_labels
        .get_or_insert_with(|| resource_labels(metrics.resource(), selection))
        .clone();
    // Summaries of the bridges whose instruments this collection holds.
    let mut summaries: Vec<(bridge::SummaryFamily, Option<String>)> = Vec::new();
    let mut summarised_scopes: Vec<&InstrumentationScope> = Vec::new();
    for scope_metrics in metrics.scope_metrics() {
        // Series of the `metrics` facade keep the names and labels
        // `metrics-exporter-prometheus` gives them: dashboards query those.
        let bridged = scope_metrics.scope().name() == bridge::SCOPE;
        let bridge = bridge::state(scope_metrics.scope());
        let summarised: Vec<bridge::SummaryFamily> =
            bridge.as_ref().map(|b| b.summaries()).unwrap_or_default();
        let bridge_help = |name: &str| bridge.as_ref().and_then(|b| b.help(name));
        let mut extra = if bridged {
            Vec::new()
        } else {
            scope_labels(scope_metrics.scope())
        };
        extra.extend(resource_labels.iter().cloned());
        for metric in scope_metrics.metrics() {
            let (kind, name) = if bridged {
                bridged_kind_and_name(metric)
            } else {
                kind_and_name(metric)
            };
            // Its summary stands for it on this endpoint.
            if summarised.iter().any(|s| s.name == name) {
                continue;
            }
            let described =
                || bridge_help(&name).unwrap_or_else(|| metric.description().to_owned());
            let Some(help) = known.help(&name, kind, bridged, described, &bridge_help) else {
                continue;
            };
            let series = series_of(metric, &extra);
            if series.is_empty() {
                continue;
            }
            by_name
                .entry(name.clone())
                .or_insert_with(|| Family {
                    name,
                    help,
                    kind,
                    metrics: Vec::new(),
                    raw: None,
                })
                .metrics
                .extend(series);
        }
        summaries.extend(summarised.into_iter().map(|summary| {
            let help = bridge_help(&summary.name);
            (summary, help)
        }));
        if bridged {
            summarised_scopes.push(scope_metrics.scope());
        }
    }
    // Series nemo-lens keeps in its own cells, beside the SDK's.
    for scope in owned {
        let bridged = scope.scope.name() == bridge::SCOPE;
        let bridge = bridge::state(&scope.scope);
        let bridge_help = |name: &str| bridge.as_ref().and_then(|b| b.help(name));
        let summarised: Vec<bridge::SummaryFamily> =
            bridge.as_ref().map(|b| b.summaries()).unwrap_or_default();
        let mut extra = if bridged {
            Vec::new()
        } else {
            scope_labels(&scope.scope)
        };
        extra.extend(resource_labels.iter().cloned());
        for metric in &scope.metrics {
            // A bridged name as `metrics-exporter-prometheus` writes it.
            let name = if bridged {
                bridge::prometheus_name(&metric.name)
            } else {
                nemo_lens_naming::rules::prometheus_family(&metric.name, &metric.unit, false)
            };
            // Its summary stands for it on this endpoint.
            if summarised.iter().any(|s| s.name == name) {
                continue;
            }
            let described = || bridge_help(&name).unwrap_or_else(|| metric.description.clone());
            let Some(help) = known.help(&name, Kind::Histogram, bridged, described, &bridge_help)
            else {
                continue;
            };
            let labelled = |attributes: &[opentelemetry::KeyValue], value| Series {
                labels: labels(
                    &mut attributes.iter().map(|kv| (&kv.key, &kv.value)),
                    &extra,
                ),
                value,
                exemplars: Vec::new(),
            };
            let series: Vec<Series> = match &metric.data {
                OwnedData::Explicit(points) => points
                    .iter()
                    .map(|p| Series {
                        exemplars: p.exemplars.clone(),
                        ..labelled(&p.attributes, owned_histogram(p))
                    })
                    .collect(),
                OwnedData::Exponential(points) => points
                    .iter()
                    .map(|p| Series {
                        exemplars: p.exemplars.clone(),
                        ..labelled(&p.attributes, owned_exponential(p))
                    })
                    .collect(),
            };
            by_name
                .entry(name.clone())
                .or_insert_with(|| Family {
                    name,
                    help,
                    kind: Kind::Histogram,
                    metrics: Vec::new(),
                    raw: None,
                })
                .metrics
                .extend(series);
        }
        // A bridge whose instruments are all owned histograms.
        if bridged && !summarised_scopes.contains(&&scope.scope) {
            summaries.extend(summarised.into_iter().map(|summary| {
                let help = bridge_help(&summary.name);
                (summary, help)
            }));
        }
    }
    add_gathered(&mut by_name, gathered, &resource_labels, known);
    for (summary, help) in summaries {
        add_summary(&mut by_name, summary, help, &resource_labels, known);
    }
    let mut families: Vec<Family> = by_name.into_values().collect();
    for family in &mut families {
        family.metrics.sort_by(|a, b| {
            a.labels.len().cmp(&b.labels.len()).then_with(|| {
                // Compared in place: cloning the values made sorting a
                // large scrape allocate twice per comparison.
                let values_a = a.labels.iter().map(|(_, v)| v);
                values_a.cmp(b.labels.iter().map(|(_, v)| v))
            })
        });
    }
    families
}

/// Families gathered from other libraries' registries, under the names,
/// HELP and labels the library gave them, with the resource labels the
/// series do not already have.
fn add_gathered(
    by_name: &mut BTreeMap<String, Family>,
    gathered: Vec<GatheredScope>,
    resource_labels: &[(String, String)],
    known: &mut Known,
) {
    let mut families = Vec::new();
    for scope in gathered {
        add_text(by_name, scope.text, resource_labels, known);
        families.extend(scope.families);
    }
    for mut family in families {
        // Every family in `by_name` so far is nemo-lens's own (SDK, cells
        // or the metrics bridge): it keeps its name.
        if by_name.contains_key(&family.name) {
            warn_shadowed(&family.name);
            continue;
        }
        let kind = kind_of(family.kind);
        let help = std::mem::take(&mut family.help);
        let Some(help) = known.help(&family.name, kind, false, || help, &|_| None) else {
            continue;
        };
        let series = family.series.into_iter().map(|series| {
            let own = series.labels.len();
            let mut labels = series.labels;
            labels.reserve(resource_labels.len() + 1);
            if series.overflow {
                labels.push((OVERFLOW_LABEL.to_owned(), "true".to_owned()));
            }
            for (name, value) in resource_labels {
                if !labels[..own].iter().any(|(mine, _)| mine == name) {
                    labels.push((name.clone(), value.clone()));
                }
            }
            let value = match series.value {
                GatheredValue::Number(value) => Sample::Number(value),
                GatheredValue::Histogram {
                    count,
                    sum,
                    buckets,
                } => Sample::Histogram {
                    count,
                    sum,
                    buckets,
                },
                GatheredValue::Summary {
                    quantiles,
                    sum,
                    count,
                } => Sample::Summary {
                    quantiles,
                    sum,
                    count,
                },
            };
            Series {
                labels,
                value,
                exemplars: Vec::new(),
            }
        });
        by_name
            .entry(family.name.clone())
            .or_insert_with(|| Family {
                name: family.name,
                help,
                kind,
                metrics: Vec::new(),
                raw: None,
            })
            .metrics
            .extend(series);
    }
}

/// Families gathered as text, copied with the resource labels added. A
/// name a nemo-lens instrument's family already has is left out (with the
/// warning), whatever its type, as on protobuf and OTLP.
fn add_text(
    by_name: &mut BTreeMap<String, Family>,
    blocks: Vec<nemo_lens_core::owned::TextBlock>,
    resource_labels: &[(String, String)],
    known: &mut Known,
) {
    if blocks.is_empty() {
        return;
    }
    let escaped: Vec<(String, String)> = resource_labels
        .iter()
        .map(|(name, value)| {
            let mut escaped = String::with_capacity(value.len());
            super::escape::escape_into(&mut escaped, value, true);
            (name.clone(), escaped)
        })
        .collect();
    for block in blocks {
        let kind = kind_of(block.kind);
        if known
            .help(&block.name, kind, false, String::new, &|_| None)
            .is_none()
        {
            continue;
        }
        if by_name.contains_key(&block.name) {
            warn_shadowed(&block.name);
            continue;
        }
        let mut raw = String::with_capacity(block.text.len() + block.text.len() / 2);
        super::passthrough::splice(&block.text, &escaped, &mut raw);
        by_name.insert(
            block.name.clone(),
            Family {
                name: block.name,
                help: String::new(),
                kind,
                metrics: Vec::new(),
                raw: Some(raw),
            },
        );
    }
}

fn kind_of(kind: GatheredKind) -> Kind {
    match kind {
        GatheredKind::Counter => Kind::Counter,
        GatheredKind::Gauge => Kind::Gauge,
        GatheredKind::Untyped => Kind::Untyped,
        GatheredKind::Histogram => Kind::Histogram,
        GatheredKind::Summary => Kind::Summary,
    }
}

/// The overflow marker as a Prometheus label.
const OVERFLOW_LABEL: &str = "otel_metric_overflow";

/// An owned histogram point as a sample: cumulative bucket counts.
fn owned_histogram(point: &HistogramPoint) -> Sample {
    let mut cumulative = 0;
    let buckets = point
        .bounds
        .iter()
        .zip(&point.bucket_counts)
        .map(|(bound, count)| {
            cumulative += count;
            (*bound, cumulative)
        })
        .collect();
    Sample::Histogram {
        count: point.count,
        sum: point.sum,
        buckets,
    }
}

/// An owned exponential histogram point as a sample.
fn owned_exponential(point: &ExponentialPoint) -> Sample {
    let side = |b: &nemo_lens_core::cells::ExponentialBuckets| Buckets {
        offset: b.offset,
        counts: b.counts.clone(),
    };
    Sample::Exponential(Exponential {
        count: point.count,
        sum: point.sum,
        scale: point.scale,
        zero_count: point.zero_count,
        positive: side(&point.positive),
        negative: side(&point.negative),
    })
}

/// The family type and name of an instrument: the sanitized name with its
/// unit's suffix, and `_total` on counters.
fn kind_and_name(metric: &OtelMetric) -> (Kind, String) {
    let monotonic_sum = match metric.data() {
        AggregatedMetrics::F64(MetricData::Sum(s)) => Some(s.is_monotonic()),
        AggregatedMetrics::U64(MetricData::Sum(s)) => Some(s.is_monotonic()),
        AggregatedMetrics::I64(MetricData::Sum(s)) => Some(s.is_monotonic()),
        _ => None,
    };
    let is_histogram = matches!(
        metric.data(),
        AggregatedMetrics::F64(MetricData::Histogram(_) | MetricData::ExponentialHistogram(_))
            | AggregatedMetrics::U64(
                MetricData::Histogram(_) | MetricData::ExponentialHistogram(_)
            )
            | AggregatedMetrics::I64(
                MetricData::Histogram(_) | MetricData::ExponentialHistogram(_)
            )
    );
    let counter = monotonic_sum == Some(true);
    let name = nemo_lens_naming::rules::prometheus_family(metric.name(), metric.unit(), counter);
    let kind = match (counter, is_histogram) {
        (true, _) => Kind::Counter,
        (_, true) => Kind::Histogram,
        _ => Kind::Gauge,
    };
    (kind, name)
}

/// A bridged summary as a family, or its series added to the family of
/// that name another bridge made; unless its name already has another type
/// on this endpoint. `described` is its bridge's HELP.
fn add_summary(
    by_name: &mut BTreeMap<String, Family>,
    summary: bridge::SummaryFamily,
    described: Option<String>,
    resource_labels: &[(String, String)],
    known: &mut Known,
) {
    let name = summary.name;
    let help = match known.families.get_mut(&name) {
        Some((existing, _)) if *existing != Kind::Summary => {
            warn_type_conflict(&name);
            return;
        }
        Some((_, help)) => {
            if help.is_empty() {
                *help = described.unwrap_or_default();
            }
            help.clone()
        }
        None => {
            let help = described.unwrap_or_default();
            known
                .families
                .insert(name.clone(), (Kind::Summary, help.clone()));
            help
        }
    };
    if summary.series.is_empty() {
        return;
    }
    let metrics = summary.series.into_iter().map(|series| {
        let mut labels = series.labels;
        let own = labels.len();
        for (name, value) in resource_labels {
            if !labels[..own].iter().any(|(mine, _)| mine == name) {
                labels.push((name.clone(), value.clone()));
            }
        }
        Series {
            labels,
            exemplars: Vec::new(),
            value: Sample::Summary {
                quantiles: series.quantiles,
                sum: series.sum,
                count: series.count,
            },
        }
    });
    by_name
        .entry(name.clone())
        .or_insert_with(|| Family {
            name,
            help,
            kind: Kind::Summary,
            metrics: Vec::new(),
            raw: None,
        })
        .metrics
        .extend(metrics);
}

/// The family type and name of a bridged instrument: its Prometheus name
/// as the facade wrote it, without unit suffix or `_total`.
fn bridged_kind_and_name(metric: &OtelMetric) -> (Kind, String) {
    let (kind, _) = kind_and_name(metric);
    (kind, bridge::prometheus_name(metric.name()))
}

fn series_of(metric: &OtelMetric, extra: &[(String, String)]) -> Vec<Series> {
    match metric.data() {
        AggregatedMetrics::F64(data) => series_of_data(data, extra, |v| v),
        AggregatedMetrics::U64(data) => series_of_data(data, extra, |v| v as f64),
        AggregatedMetrics::I64(data) => series_of_data(data, extra, |v| v as f64),
    }
}

fn series_of_data<T: Copy>(
    data: &MetricData<T>,
    extra: &[(String, String)],
    as_f64: impl Fn(T) -> f64,
) -> Vec<Series> {
    let labelled = |attributes: &mut dyn Iterator<Item = &opentelemetry::KeyValue>, value| Series {
        labels: labels(&mut attributes.map(|kv| (&kv.key, &kv.value)), extra),
        value,
        exemplars: Vec::new(),
    };
    match data {
        MetricData::Gauge(gauge) => gauge
            .data_points()
            .map(|p| labelled(&mut p.attributes(), Sample::Number(as_f64(p.value()))))
            .collect(),
        MetricData::Sum(sum) => sum
            .data_points()
            .map(|p| labelled(&mut p.attributes(), Sample::Number(as_f64(p.value()))))
            .collect(),
        MetricData::Histogram(histogram) => histogram
            .data_points()
            .map(|p| {
                let mut cumulative = 0;
                let buckets = p
                    .bounds()
                    .zip(p.bucket_counts())
                    .map(|(bound, count)| {
                        cumulative += count;
                        (bound, cumulative)
                    })
                    .collect();
                let sample = Sample::Histogram {
                    count: p.count(),
                    sum: as_f64(p.sum()),
                    buckets,
                };
                labelled(&mut p.attributes(), sample)
            })
            .collect(),
        MetricData::ExponentialHistogram(histogram) => histogram
            .data_points()
            .map(|p| {
                let side = |b: &opentelemetry_sdk::metrics::data::ExponentialBucket| Buckets {
                    offset: b.offset(),
                    counts: b.counts().collect(),
                };
                let sample = Sample::Exponential(Exponential {
                    count: p.count() as u64,
                    sum: as_f64(p.sum()),
                    scale: p.scale(),
                    zero_count: p.zero_count(),
                    positive: side(p.positive_bucket()),
                    negative: side(p.negative_bucket()),
                });
                labelled(&mut p.attributes(), sample)
            })
            .collect(),
    }
}

/// The labels of a point: its attributes under their label names, sorted,
/// values of attributes whose names collide joined with `;` in key order,
/// then the `extra` labels (scope, then resource) that no attribute of the
/// point already names: where a point and its resource share a key, the
/// point's value is the label's, one value as the collector's
/// resource-to-telemetry conversion keeps, so a dashboard filter on it
/// still matches.
fn labels(
    attributes: &mut dyn Iterator<Item = (&Key, &OtelValue)>,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    let mut own: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (key, value) in attributes {
        own.entry(nemo_lens_naming::label_name(key.as_str()))
            .or_default()
            .push((key.as_str().to_owned(), value.to_string()));
    }
    let mut labels: Vec<(String, String)> = Vec::with_capacity(own.len() + extra.len());
    labels.extend(own.into_iter().map(|(name, mut values)| {
        values.sort_by(|(a, _), (b, _)| a.cmp(b));
        let joined = values
            .into_iter()
            .map(|(_, value)| value)
            .collect::<Vec<_>>()
            .join(";");
        (name, joined)
    }));
    for (name, value) in extra {
        if !labels.iter().any(|(taken, _)| taken == name) {
            labels.push((name.clone(), value.clone()));
        }
    }
    labels
}

fn scope_labels(scope: &InstrumentationScope) -> Vec<(String, String)> {
    let mut labels = vec![(SCOPE_NAME_LABEL.to_owned(), scope.name().to_owned())];
    if let Some(version) = scope.version() {
        labels.push((SCOPE_VERSION_LABEL.to_owned(), version.to_owned()));
    }
    if let Some(schema_url) = scope.schema_url() {
        labels.push((SCOPE_SCHEMA_URL_LABEL.to_owned(), schema_url.to_owned()));
    }
    let mut attributes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for kv in scope.attributes() {
        if matches!(kv.key.as_str(), "name" | "version" | "schema_url") {
            continue;
        }
        let label = nemo_lens_naming::label_name(&format!("{SCOPE_ATTRIBUTE_PREFIX}{}", kv.key));
        if [
            SCOPE_NAME_LABEL,
            SCOPE_VERSION_LABEL,
            SCOPE_SCHEMA_URL_LABEL,
        ]
        .contains(&label.as_str())
        {
            continue;
        }
        attributes
            .entry(label)
            .or_default()
            .push(kv.value.to_string());
    }
    labels.extend(
        attributes
            .into_iter()
            .map(|(label, values)| (label, values.join(";"))),
    );
    labels
}

fn resource_labels(
    resource: &Resource,
    selection: &PrometheusResourceLabels,
) -> Vec<(String, String)> {
    match selection {
        PrometheusResourceLabels::All => labels(&mut resource.iter(), &[]),
        PrometheusResourceLabels::None => Vec::new(),
        PrometheusResourceLabels::Keys(keys) => labels(
            &mut resource
                .iter()
                .filter(|(k, _)| keys.iter().any(|wanted| wanted == k.as_str())),
            &[],
        ),
    }
}

fn target_info(resource: &Resource) -> Family {
    Family {
        name: TARGET_INFO_NAME.to_owned(),
        help: TARGET_INFO_DESCRIPTION.to_owned(),
        kind: Kind::Gauge,
        metrics: vec![Series {
            labels: labels(&mut resource.iter(), &[]),
            value: Sample::Number(1.0),
            exemplars: Vec::new(),
        }],
        raw: None,
    }
}

fn warn_type_conflict(name: &str) {
    warnings::emit(warnings::Warning::NameConflict, || {
        tracing::warn!(
            target: "nemo_lens",
            metric = %name,
            "two instruments give Prometheus metric {name} different types; the second is not \
             exported"
        );
    });
}
