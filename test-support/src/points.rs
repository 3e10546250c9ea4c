//! Test harness: a meter backed by the SDK's in-memory exporter, and a flat
//! view of what it exported so tests can assert values and attributes.

use std::collections::BTreeMap;

use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use nemo_lens::Meter;

/// An exported attribute value.
pub use nemo_lens::opentelemetry::Value as AttrValue;

/// A provider exporting into memory, and a `Meter` on it.
pub struct Harness {
    pub provider: SdkMeterProvider,
    pub exporter: InMemoryMetricExporter,
    pub meter: Meter,
}

impl Harness {
    pub fn new() -> Self {
        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter.clone()).build())
            .build();
        let meter = Meter::from(provider.meter("nemo.lens"));
        Harness {
            provider,
            exporter,
            meter,
        }
    }

    /// Every point of the latest export, after flushing; none when nothing
    /// was recorded (the SDK then exports nothing).
    pub fn points(&self) -> Vec<Point> {
        self.exporter.reset();
        self.provider.force_flush().expect("flush");
        latest_points(&self.exporter)
    }

    /// The one point of the latest export; panics, listing what was
    /// exported, when there is none or more than one.
    pub fn only_point(&self) -> Point {
        let mut points = self.points();
        assert_eq!(points.len(), 1, "{points:#?}");
        points.remove(0)
    }

    /// The points of instrument `name`.
    pub fn points_of(&self, name: &str) -> Vec<Point> {
        self.points()
            .into_iter()
            .filter(|p| p.name == name)
            .collect()
    }
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

/// Every point of the latest export `exporter` received.
pub fn latest_points(exporter: &InMemoryMetricExporter) -> Vec<Point> {
    let batches = exporter.get_finished_metrics().expect("finished metrics");
    let Some(latest) = batches.last() else {
        return Vec::new();
    };
    let mut points = Vec::new();
    for scope in latest.scope_metrics() {
        for metric in scope.metrics() {
            flatten(scope.scope().name(), metric, &mut points);
        }
    }
    points
}

/// One exported data point with its instrument's identity.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub scope: String,
    pub name: String,
    pub description: String,
    pub unit: String,
    /// `Gauge`, `Sum` or `Histogram`, as the Python dump spells them.
    pub kind: &'static str,
    /// `f64`, `u64` or `i64`.
    pub number: &'static str,
    /// Attribute values as exported, typed: `I64(3)` and `"3"` differ.
    pub attributes: BTreeMap<String, AttrValue>,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Number(f64),
    Histogram {
        count: u64,
        sum: f64,
        min: Option<f64>,
        max: Option<f64>,
        bounds: Vec<f64>,
        bucket_counts: Vec<u64>,
    },
}

impl Point {
    pub fn number(&self) -> f64 {
        match self.value {
            Value::Number(n) => n,
            Value::Histogram { .. } => panic!("{} is a histogram", self.name),
        }
    }

    /// The attribute `key`, typed.
    pub fn attr(&self, key: &str) -> Option<&AttrValue> {
        self.attributes.get(key)
    }

    /// The attribute `key` when it is a string; `None` when absent or of
    /// another type.
    pub fn str_attr(&self, key: &str) -> Option<&str> {
        match self.attributes.get(key)? {
            AttrValue::String(s) => Some(s.as_str()),
            _ => None,
        }
    }
}

fn flatten(
    scope: &str,
    metric: &nemo_lens::opentelemetry_sdk::metrics::data::Metric,
    out: &mut Vec<Point>,
) {
    let (number, data): (&'static str, Vec<RawPoint>) = match metric.data() {
        AggregatedMetrics::F64(data) => ("f64", data_points(data, |v| v)),
        AggregatedMetrics::U64(data) => ("u64", data_points(data, |v| v as f64)),
        AggregatedMetrics::I64(data) => ("i64", data_points(data, |v| v as f64)),
    };
    for (kind, attributes, value) in data {
        out.push(Point {
            scope: scope.to_owned(),
            name: metric.name().to_owned(),
            description: metric.description().to_owned(),
            unit: metric.unit().to_owned(),
            kind,
            number,
            attributes,
            value,
        });
    }
}

fn attrs<'a>(
    kvs: impl Iterator<Item = &'a nemo_lens::opentelemetry::KeyValue>,
) -> BTreeMap<String, AttrValue> {
    kvs.map(|kv| (kv.key.to_string(), kv.value.clone()))
        .collect()
}

/// Typed attributes from a JSON object of a reference dump: strings, integers,
/// floats and booleans as the SDK would carry them.
pub fn json_attributes(object: &serde_json::Value) -> BTreeMap<String, AttrValue> {
    let object = object.as_object().expect("attributes are a JSON object");
    object
        .iter()
        .map(|(key, value)| {
            let value = match value {
                serde_json::Value::String(s) => AttrValue::from(s.clone()),
                serde_json::Value::Bool(b) => AttrValue::Bool(*b),
                serde_json::Value::Number(n) if n.is_i64() => AttrValue::I64(n.as_i64().unwrap()),
                serde_json::Value::Number(n) => AttrValue::F64(n.as_f64().unwrap()),
                other => panic!("unsupported attribute value {other} for {key}"),
            };
            (key.clone(), value)
        })
        .collect()
}

/// Kind, attributes and value of one point.
type RawPoint = (&'static str, BTreeMap<String, AttrValue>, Value);

fn data_points<T: Copy>(data: &MetricData<T>, to_f64: impl Fn(T) -> f64) -> Vec<RawPoint> {
    match data {
        MetricData::Gauge(gauge) => gauge
            .data_points()
            .map(|p| {
                (
                    "Gauge",
                    attrs(p.attributes()),
                    Value::Number(to_f64(p.value())),
                )
            })
            .collect(),
        MetricData::Sum(sum) => sum
            .data_points()
            .map(|p| {
                (
                    "Sum",
                    attrs(p.attributes()),
                    Value::Number(to_f64(p.value())),
                )
            })
            .collect(),
        MetricData::Histogram(histogram) => histogram
            .data_points()
            .map(|p| {
                let value = Value::Histogram {
                    count: p.count(),
                    sum: to_f64(p.sum()),
                    min: p.min().map(&to_f64),
                    max: p.max().map(&to_f64),
                    bounds: p.bounds().collect(),
                    bucket_counts: p.bucket_counts().collect(),
                };
                ("Histogram", attrs(p.attributes()), value)
            })
            .collect(),
        MetricData::ExponentialHistogram(_) => panic!("no exponential histograms are declared"),
    }
}
