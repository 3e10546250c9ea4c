//! An exporter that writes one JSON line per export, for local runs and
//! log-scraping setups.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::metrics::data::{
    AggregatedMetrics, ExponentialBucket, MetricData, ResourceMetrics,
};
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::Temporality;
use serde_json::{json, Map, Value as Json};

use nemo_lens_core::cells::ExponentialBuckets;
use nemo_lens_core::owned::{
    GatheredFamily, GatheredKind, GatheredScope, GatheredValue, OwnedData, OwnedMetric, OwnedScope,
    Pending, KEEPALIVE_SCOPE,
};
use nemo_lens_core::ValueType;

/// Writes each export as one JSON object on one line.
///
/// The line holds `resource` (attributes), and `scope_metrics`, each with
/// `scope` and `metrics`; a metric has `name`, `description`, `unit`, `type`
/// (`gauge`, `sum` or `histogram`) and `data_points` with `attributes` and
/// `value`, or `count`, `sum`, `min`, `max`, `bounds`, `bucket_counts` and
/// `exemplars` when there are new ones (each printed once: `value`, `time_unix_nano`, `trace_id`,
/// `span_id`).
pub struct ConsoleExporter {
    out: Mutex<Box<dyn Write + Send>>,
    shut: AtomicBool,
    owned: Option<Arc<Pending>>,
}

impl ConsoleExporter {
    /// Writes to standard output.
    pub fn stdout() -> Self {
        Self::to_writer(std::io::stdout())
    }

    /// Writes to `out`, for tests and custom sinks.
    pub fn to_writer(out: impl Write + Send + 'static) -> Self {
        ConsoleExporter {
            out: Mutex::new(Box::new(out)),
            shut: AtomicBool::new(false),
            owned: None,
        }
    }

    /// The same, also writing the owned series of each export.
    pub(crate) fn with_owned(mut self, pending: Arc<Pending>) -> Self {
        self.owned = Some(pending);
        self
    }
}

impl std::fmt::Debug for ConsoleExporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConsoleExporter")
    }
}

impl PushMetricExporter for ConsoleExporter {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        if self.shut.load(Ordering::Relaxed) {
            return Err(OTelSdkError::AlreadyShutdown);
        }
        let json = match &self.owned {
            Some(pending) => {
                pending.with(|batch| to_json_with(metrics, &batch.scopes, &batch.gathered))
            }
            None => to_json(metrics),
        };
        let mut line = json.to_string();
        line.push('\n');
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        out.write_all(line.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| OTelSdkError::InternalFailure(format!("console export: {e}")))
    }

    fn force_flush(&self) -> OTelSdkResult {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        out.flush()
            .map_err(|e| OTelSdkError::InternalFailure(format!("console flush: {e}")))
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        self.shut.store(true, Ordering::Relaxed);
        self.force_flush()
    }

    fn temporality(&self) -> Temporality {
        Temporality::Cumulative
    }
}

/// The JSON document of one export.
pub fn to_json(metrics: &ResourceMetrics) -> Json {
    to_json_with(metrics, &[], &[])
}

/// The JSON document of one export with the owned series beside the SDK's,
/// in the scope they belong to, and the families gathered from other
/// libraries' registries, each registry a scope of its own.
fn to_json_with(
    metrics: &ResourceMetrics,
    owned: &[OwnedScope],
    gathered: &[GatheredScope],
) -> Json {
    let resource: Map<String, Json> = metrics
        .resource()
        .iter()
        .map(|(k, v)| (k.to_string(), value_json(v)))
        .collect();
    let mut owned: Vec<&OwnedScope> = owned.iter().collect();
    let mut scopes: Vec<Json> = metrics
        .scope_metrics()
        .filter(|scope| scope.scope().name() != KEEPALIVE_SCOPE)
        .map(|scope| {
            let mut list: Vec<Json> = scope
                .metrics()
                .map(|m| {
                    let (kind, points) = match m.data() {
                        AggregatedMetrics::F64(d) => data_json(d, |v| json!(v)),
                        AggregatedMetrics::U64(d) => data_json(d, |v| json!(v)),
                        AggregatedMetrics::I64(d) => data_json(d, |v| json!(v)),
                    };
                    json!({
                        "name": m.name(),
                        "description": m.description(),
                        "unit": m.unit(),
                        "type": kind,
                        "data_points": points,
                    })
                })
                .collect();
            if let Some(i) = owned.iter().position(|o| &o.scope == scope.scope()) {
                list.extend(owned.remove(i).metrics.iter().map(owned_json));
            }
            json!({
                "scope": {
                    "name": scope.scope().name(),
                    "version": scope.scope().version(),
                },
                "metrics": list,
            })
        })
        .collect();
    scopes.extend(owned.into_iter().map(|scope| {
        json!({
            "scope": {
                "name": scope.scope.name(),
                "version": scope.scope.version(),
            },
            "metrics": scope.metrics.iter().map(owned_json).collect::<Vec<_>>(),
        })
    }));
    scopes.extend(gathered.iter().map(|source| {
        json!({
            "scope": {
                "name": source.scope.name(),
                "version": source.scope.version(),
            },
            "metrics": source.families.iter().map(gathered_json).collect::<Vec<_>>(),
        })
    }));
    let unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default();
    json!({ "time_unix_ms": unix_ms, "resource": resource, "scope_metrics": scopes })
}

/// A gathered family as OTLP carries it (see `otlp::gathered`): counters
/// as sums, gauges and untyped values as gauges, histograms with per-bucket
/// counts, summaries with their quantiles; named as over OTLP.
fn gathered_json(family: &GatheredFamily) -> Json {
    let kind = match family.kind {
        GatheredKind::Counter => "sum",
        GatheredKind::Gauge | GatheredKind::Untyped => "gauge",
        GatheredKind::Histogram => "histogram",
        GatheredKind::Summary => "summary",
    };
    let points: Vec<Json> = family
        .series
        .iter()
        .map(|series| {
            let mut attributes: Map<String, Json> = series
                .labels
                .iter()
                .map(|(name, value)| (name.clone(), json!(value)))
                .collect();
            if series.overflow {
                attributes.insert(
                    nemo_lens_core::__internal::overflow::OVERFLOW_ATTRIBUTE.into(),
                    json!(true),
                );
            }
            let mut point = Map::new();
            point.insert("attributes".into(), Json::Object(attributes));
            match &series.value {
                GatheredValue::Number(value) => {
                    point.insert("value".into(), json!(value));
                }
                GatheredValue::Histogram { count, sum, .. } => {
                    point.insert("count".into(), json!(count));
                    point.insert("sum".into(), json!(sum));
                    if let Some((bounds, counts)) = series.value.per_bucket() {
                        point.insert("bounds".into(), json!(bounds));
                        point.insert("bucket_counts".into(), json!(counts));
                    }
                }
                GatheredValue::Summary {
                    quantiles,
                    sum,
                    count,
                } => {
                    point.insert("count".into(), json!(count));
                    point.insert("sum".into(), json!(sum));
                    let quantiles: Vec<Json> = quantiles
                        .iter()
                        .map(|(quantile, value)| json!({ "quantile": quantile, "value": value }))
                        .collect();
                    point.insert("quantiles".into(), json!(quantiles));
                }
            }
            Json::Object(point)
        })
        .collect();
    let name = nemo_lens_core::__internal::bridge::otel_name(&family.name)
        .unwrap_or_else(|| family.name.clone());
    json!({
        "name": name,
        "description": family.help,
        "unit": family.unit,
        "type": kind,
        "data_points": points,
    })
}

/// An owned histogram, numbers written as the SDK's of its value type are.
fn owned_json(metric: &OwnedMetric) -> Json {
    let num = |v: f64| match metric.value_type {
        ValueType::U64 => json!(v as u64),
        ValueType::I64 => json!(v as i64),
        ValueType::F64 => json!(v),
    };
    let (kind, points): (&str, Vec<Json>) = match &metric.data {
        OwnedData::Explicit(points) => (
            "histogram",
            points
                .iter()
                .map(|p| {
                    let extremes = (p.min.map(num), p.max.map(num));
                    let mut point =
                        histogram_point(p.attributes.iter(), p.count, num(p.sum), extremes);
                    point.insert("bounds".into(), json!(p.bounds.to_vec()));
                    point.insert("bucket_counts".into(), json!(p.bucket_counts));
                    if !p.exemplars.is_empty() {
                        point.insert("exemplars".into(), exemplars_json(&p.exemplars));
                    }
                    Json::Object(point)
                })
                .collect(),
        ),
        OwnedData::Exponential(points) => (
            "exponential_histogram",
            points
                .iter()
                .map(|p| {
                    let side =
                        |b: &ExponentialBuckets| json!({ "offset": b.offset, "counts": b.counts });
                    let extremes = (p.min.map(num), p.max.map(num));
                    let mut point =
                        histogram_point(p.attributes.iter(), p.count, num(p.sum), extremes);
                    point.insert("scale".into(), json!(p.scale));
                    point.insert("zero_count".into(), json!(p.zero_count));
                    point.insert("zero_threshold".into(), json!(0.0));
                    point.insert("positive".into(), side(&p.positive));
                    point.insert("negative".into(), side(&p.negative));
                    if !p.exemplars.is_empty() {
                        point.insert("exemplars".into(), exemplars_json(&p.exemplars));
                    }
                    Json::Object(point)
                })
                .collect(),
        ),
    };
    json!({
        "name": metric.name,
        "description": metric.description,
        "unit": metric.unit,
        "type": kind,
        "data_points": points,
    })
}

/// Each exemplar not printed before: `value`, `time_unix_nano`, and
/// `trace_id` / `span_id` in lowercase hex (absent outside a span).
fn exemplars_json(held: &[nemo_lens_core::exemplar::Exemplar]) -> Json {
    held.iter()
        .map(|e| {
            let mut exemplar = Map::new();
            exemplar.insert("value".into(), json!(e.value));
            let nanos = e
                .time
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            exemplar.insert("time_unix_nano".into(), json!(nanos));
            if let (Some(trace), Some(span)) = (e.trace_id_hex(), e.span_id_hex()) {
                exemplar.insert("trace_id".into(), json!(trace));
                exemplar.insert("span_id".into(), json!(span));
            }
            Json::Object(exemplar)
        })
        .collect()
}

fn data_json<T: Copy>(data: &MetricData<T>, num: impl Fn(T) -> Json) -> (&'static str, Vec<Json>) {
    match data {
        MetricData::Gauge(g) => (
            "gauge",
            g.data_points()
                .map(|p| json!({ "attributes": attrs_json(p.attributes()), "value": num(p.value()) }))
                .collect(),
        ),
        MetricData::Sum(s) => (
            "sum",
            s.data_points()
                .map(|p| json!({ "attributes": attrs_json(p.attributes()), "value": num(p.value()) }))
                .collect(),
        ),
        MetricData::Histogram(h) => (
            "histogram",
            h.data_points()
                .map(|p| {
                    let extremes = (p.min().map(&num), p.max().map(&num));
                    let mut point =
                        histogram_point(p.attributes(), p.count(), num(p.sum()), extremes);
                    point.insert("bounds".into(), json!(p.bounds().collect::<Vec<_>>()));
                    let counts = p.bucket_counts().collect::<Vec<_>>();
                    point.insert("bucket_counts".into(), json!(counts));
                    Json::Object(point)
                })
                .collect(),
        ),
        MetricData::ExponentialHistogram(h) => (
            "exponential_histogram",
            h.data_points()
                .map(|p| {
                    let extremes = (p.min().map(&num), p.max().map(&num));
                    let count = p.count() as u64;
                    let mut point = histogram_point(p.attributes(), count, num(p.sum()), extremes);
                    point.insert("scale".into(), json!(p.scale()));
                    point.insert("zero_count".into(), json!(p.zero_count()));
                    point.insert("zero_threshold".into(), json!(p.zero_threshold()));
                    point.insert("positive".into(), buckets_json(p.positive_bucket()));
                    point.insert("negative".into(), buckets_json(p.negative_bucket()));
                    Json::Object(point)
                })
                .collect(),
        ),
    }
}

/// What every histogram point has, of either aggregation, the SDK's or an
/// owned one; the caller adds its buckets.
fn histogram_point<'a>(
    attributes: impl Iterator<Item = &'a KeyValue>,
    count: u64,
    sum: Json,
    (min, max): (Option<Json>, Option<Json>),
) -> Map<String, Json> {
    let mut point = Map::new();
    point.insert("attributes".into(), attrs_json(attributes));
    point.insert("count".into(), json!(count));
    point.insert("sum".into(), sum);
    point.insert("min".into(), json!(min));
    point.insert("max".into(), json!(max));
    point
}

/// Bucket `offset + i` covers `(base^(offset+i), base^(offset+i+1)]` with
/// `base = 2^(2^-scale)`, as in OTLP.
fn buckets_json(bucket: &ExponentialBucket) -> Json {
    json!({ "offset": bucket.offset(), "counts": bucket.counts().collect::<Vec<_>>() })
}

fn attrs_json<'a>(attrs: impl Iterator<Item = &'a KeyValue>) -> Json {
    Json::Object(
        attrs
            .map(|kv| (kv.key.to_string(), value_json(&kv.value)))
            .collect(),
    )
}

fn value_json(value: &Value) -> Json {
    match value {
        Value::Bool(b) => json!(b),
        Value::I64(i) => json!(i),
        Value::F64(f) => json!(f),
        Value::String(s) => json!(s.as_str()),
        other => json!(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
    use opentelemetry_sdk::Resource;
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn one_json_line_per_export_with_values_and_attributes() {
        let buffer = Buffer::default();
        let exporter = ConsoleExporter::to_writer(buffer.clone());
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter).build())
            .with_resource(Resource::builder_empty().with_service_name("svc").build())
            .build();
        let meter = provider.meter("nemo.lens");
        let hist = meter
            .f64_histogram("rl.generation.duration_ms")
            .with_unit("ms")
            .with_boundaries(vec![10.0, 100.0])
            .build();
        hist.record(50.0, &[]);
        hist.record(500.0, &[]);
        meter
            .u64_counter("gym.requests")
            .build()
            .add(3, &[KeyValue::new("server", "math")]);
        provider.force_flush().unwrap();
        provider.shutdown().unwrap();

        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(!lines.is_empty());
        let doc: Json = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(doc["resource"]["service.name"], "svc");
        let metrics = doc["scope_metrics"][0]["metrics"].as_array().unwrap();
        assert_eq!(doc["scope_metrics"][0]["scope"]["name"], "nemo.lens");
        let hist = metrics.iter().find(|m| m["type"] == "histogram").unwrap();
        assert_eq!(hist["name"], "rl.generation.duration_ms");
        assert_eq!(hist["unit"], "ms");
        let point = &hist["data_points"][0];
        assert_eq!(point["count"], 2);
        assert_eq!(point["sum"], 550.0);
        assert_eq!(point["bounds"], json!([10.0, 100.0]));
        assert_eq!(point["bucket_counts"], json!([0, 1, 1]));
        let sum = metrics.iter().find(|m| m["type"] == "sum").unwrap();
        assert_eq!(sum["data_points"][0]["value"], 3);
        assert_eq!(sum["data_points"][0]["attributes"]["server"], "math");
    }

    #[test]
    fn exponential_histograms_print_their_buckets() {
        let buffer = Buffer::default();
        let exporter = ConsoleExporter::to_writer(buffer.clone());
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter).build())
            .with_view(nemo_lens_core::histogram_view(
                nemo_lens_core::HistogramAggregation::Base2Exponential,
            ))
            .build();
        let hist = provider
            .meter("nemo.lens")
            .f64_histogram("gen_ai.server.time_to_first_token")
            .with_unit("s")
            .build();
        for value in [0.0, 1.0, 2.0, 4.0] {
            hist.record(value, &[]);
        }
        provider.force_flush().unwrap();
        provider.shutdown().unwrap();

        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let doc: Json = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let metric = &doc["scope_metrics"][0]["metrics"][0];
        assert_eq!(metric["type"], "exponential_histogram");
        let point = &metric["data_points"][0];
        assert_eq!(point["count"], 4);
        assert_eq!(point["sum"], 7.0);
        assert_eq!(point["zero_count"], 1);
        assert_eq!(point["min"], 0.0);
        assert_eq!(point["max"], 4.0);
        // Three values one power of two apart: the SDK settles on the
        // largest scale that fits them in 160 buckets, where each power of
        // two spans 2^scale buckets.
        let scale = point["scale"].as_i64().unwrap();
        let counts: Vec<u64> = point["positive"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        assert_eq!(counts.iter().sum::<u64>(), 3);
        assert_eq!(counts.len() as i64, 2 * (1 << scale) + 1);
        assert_eq!(point["negative"]["counts"], json!([]));
    }

    /// Owned histograms, explicit and exponential, are written in the scope
    /// of their meter exactly as the SDK's instruments of the same data.
    #[test]
    fn owned_histograms_are_written_as_the_sdks() {
        use nemo_lens_core::__internal::OwnedContext;
        use nemo_lens_core::__internal::Streams;
        use nemo_lens_core::owned::Registry;
        use nemo_lens_core::HistogramAggregation;
        use opentelemetry_sdk::metrics::reader::MetricReader;
        use opentelemetry_sdk::metrics::ManualReader;

        #[derive(Debug)]
        struct Shared(Arc<ManualReader>);
        impl MetricReader for Shared {
            fn register_pipeline(&self, p: std::sync::Weak<opentelemetry_sdk::metrics::Pipeline>) {
                self.0.register_pipeline(p)
            }
            fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
                self.0.collect(rm)
            }
            fn force_flush(&self) -> OTelSdkResult {
                self.0.force_flush()
            }
            fn shutdown_with_timeout(&self, t: Duration) -> OTelSdkResult {
                self.0.shutdown_with_timeout(t)
            }
            fn temporality(&self, k: opentelemetry_sdk::metrics::InstrumentKind) -> Temporality {
                self.0.temporality(k)
            }
        }
        for aggregation in HistogramAggregation::ALL {
            let reader = Arc::new(ManualReader::builder().build());
            let provider = SdkMeterProvider::builder()
                .with_reader(Shared(Arc::clone(&reader)))
                .with_view(nemo_lens_core::histogram_view(aggregation))
                .build();
            let scope = opentelemetry::InstrumentationScope::builder("nemo.lens").build();
            let registry = Registry::new();
            let meter = nemo_lens_core::__internal::meter_with_owned(
                provider.meter_with_scope(scope.clone()),
                nemo_lens_core::SemconvOptIn::none(),
                OwnedContext {
                    registry: Arc::clone(&registry),
                    scope,
                    streams: Arc::new(Streams {
                        histogram_aggregation: aggregation,
                        ..Streams::default()
                    }),
                },
            );
            let sdk = meter
                .otel()
                .f64_histogram("sdk.latency")
                .with_unit("ms")
                .build();
            let own = meter.f64_histogram("own.latency").with_unit("ms").build();
            let attributes = [KeyValue::new("model", "m")];
            for value in [0.5, 7.0, 70.0, 700.0, -3.0, 0.0] {
                sdk.record(value, &attributes);
                own.record(value, &attributes);
            }
            let mut collected = ResourceMetrics::default();
            reader.collect(&mut collected).unwrap();
            let json = to_json_with(&collected, &registry.collect(false), &[]);
            let scopes = json["scope_metrics"].as_array().unwrap();
            assert_eq!(scopes.len(), 1, "one scope for both: {json}");
            let metrics = scopes[0]["metrics"].as_array().unwrap();
            let find = |name: &str| {
                let mut metric = metrics
                    .iter()
                    .find(|m| m["name"] == name)
                    .unwrap_or_else(|| panic!("no {name} in {json}"))
                    .clone();
                metric["name"] = Json::Null;
                metric
            };
            assert_eq!(find("own.latency"), find("sdk.latency"), "{aggregation}");
        }
    }

    #[test]
    fn gathered_families_are_written_as_otlp_carries_them() {
        use nemo_lens_core::owned::{GatheredFamily, GatheredKind, GatheredScope, GatheredSeries};
        let series = |value| GatheredSeries::new(vec![("model".into(), "m".into())], value);
        let mut overflow = series(GatheredValue::Number(4.0));
        overflow.labels.clear();
        overflow.overflow = true;
        let source = GatheredScope {
            scope: opentelemetry::InstrumentationScope::builder("nemo_lens.registry_bridge")
                .build(),
            families: vec![
                GatheredFamily {
                    name: "dynamo:requests_total".into(),
                    help: "Requests".into(),
                    unit: String::new(),
                    kind: GatheredKind::Counter,
                    series: vec![series(GatheredValue::Number(3.0)), overflow],
                },
                GatheredFamily {
                    name: "latency_seconds".into(),
                    help: "Latency".into(),
                    unit: "s".into(),
                    kind: GatheredKind::Histogram,
                    series: vec![series(GatheredValue::Histogram {
                        count: 5,
                        sum: 2.0,
                        buckets: vec![(0.1, 1), (1.0, 4)],
                    })],
                },
            ],
            text: Vec::new(),
        };
        let json = to_json_with(&ResourceMetrics::default(), &[], &[source]);
        let scope = &json["scope_metrics"][0];
        assert_eq!(scope["scope"]["name"], "nemo_lens.registry_bridge");
        let requests = &scope["metrics"][0];
        assert_eq!(requests["name"], "dynamo.requests_total");
        assert_eq!(requests["type"], "sum");
        assert_eq!(requests["data_points"][0]["attributes"]["model"], "m");
        assert_eq!(requests["data_points"][0]["value"], 3.0);
        assert_eq!(
            requests["data_points"][1]["attributes"]
                [nemo_lens_core::__internal::overflow::OVERFLOW_ATTRIBUTE],
            true
        );
        let latency = &scope["metrics"][1];
        assert_eq!(latency["type"], "histogram");
        assert_eq!(latency["data_points"][0]["bucket_counts"], json!([1, 3, 1]));
        assert_eq!(latency["data_points"][0]["bounds"], json!([0.1, 1.0]));
        assert_eq!(latency["data_points"][0]["count"], 5);
    }

    /// A histogram point's exemplars go on its JSON line: value, time and
    /// the span's ids in lowercase hex; a point without any has no key.
    #[test]
    fn exemplars_are_written_on_the_histogram_point() {
        use nemo_lens_core::exemplar::{Exemplar, SpanIds};
        use nemo_lens_core::owned::{HistogramPoint, OwnedData, OwnedMetric, OwnedScope};
        use opentelemetry::trace::{SpanId, TraceId};
        let span = SpanIds::new(TraceId::from(0xab_u128), SpanId::from(0xcd_u64));
        let point = |exemplars: Vec<Exemplar>| HistogramPoint {
            attributes: Vec::new(),
            start_time: std::time::UNIX_EPOCH,
            bounds: [1.0].into(),
            bucket_counts: vec![1, 0],
            count: 1,
            sum: 0.5,
            min: Some(0.5),
            max: Some(0.5),
            exemplars,
        };
        let exemplar = Exemplar {
            value: 0.5,
            time: std::time::UNIX_EPOCH + Duration::from_nanos(1_796_000_000_123_456_789),
            span: Some(span),
        };
        let owned = [OwnedScope {
            scope: opentelemetry::InstrumentationScope::builder("nemo.lens").build(),
            metrics: vec![OwnedMetric {
                name: "ttft".into(),
                description: String::new(),
                unit: "s".into(),
                value_type: nemo_lens_core::ValueType::F64,
                data: OwnedData::Explicit(vec![point(vec![exemplar]), point(Vec::new())]),
            }],
        }];
        let json = to_json_with(&ResourceMetrics::default(), &owned, &[]);
        let points = &json["scope_metrics"][0]["metrics"][0]["data_points"];
        assert_eq!(
            points[0]["exemplars"],
            serde_json::json!([{
                "value": 0.5,
                "time_unix_nano": 1_796_000_000_123_456_789_u64,
                "trace_id": "000000000000000000000000000000ab",
                "span_id": "00000000000000cd",
            }])
        );
        assert_eq!(points[1]["exemplars"], Json::Null, "{json}");
    }
}
