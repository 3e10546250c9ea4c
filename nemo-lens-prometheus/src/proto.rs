//! The messages of the Prometheus protobuf exposition
//! (`io.prometheus.client`, client_model v0.3.0, what Prometheus 2.42 reads),
//! written out with prost's derive: the fields nemo-lens writes, with their
//! field numbers. Public for tools that read an endpoint (`nemo-lens top`):
//! each family is one length-delimited `MetricFamily`.
//!
//! ```
//! use nemo_lens::prometheus::proto::MetricFamily;
//! use prost::Message;
//!
//! let family = MetricFamily { name: "up".into(), r#type: 1, ..Default::default() };
//! let bytes = family.encode_length_delimited_to_vec();
//! assert_eq!(MetricFamily::decode_length_delimited(&bytes[..]).unwrap(), family);
//! ```

use prost::Message;

/// A label: name and value.
#[derive(Clone, PartialEq, Message)]
pub struct LabelPair {
    #[prost(string, tag = "1")]
    /// `name`.
    pub name: String,
    #[prost(string, tag = "2")]
    /// `value`.
    pub value: String,
}

/// A gauge's value.
#[derive(Clone, PartialEq, Message)]
pub struct Gauge {
    #[prost(double, tag = "1")]
    /// `value`.
    pub value: f64,
}

/// A counter's value.
#[derive(Clone, PartialEq, Message)]
pub struct Counter {
    #[prost(double, tag = "1")]
    /// `value`.
    pub value: f64,
}

/// An untyped sample's value.
#[derive(Clone, PartialEq, Message)]
pub struct Untyped {
    #[prost(double, tag = "1")]
    /// `value`.
    pub value: f64,
}

/// One quantile of a summary.
#[derive(Clone, PartialEq, Message)]
pub struct Quantile {
    #[prost(double, tag = "1")]
    /// `quantile`.
    pub quantile: f64,
    #[prost(double, tag = "2")]
    /// `value`.
    pub value: f64,
}

/// A summary: count, sum and quantiles.
#[derive(Clone, PartialEq, Message)]
pub struct Summary {
    #[prost(uint64, tag = "1")]
    /// `sample_count`.
    pub sample_count: u64,
    #[prost(double, tag = "2")]
    /// `sample_sum`.
    pub sample_sum: f64,
    #[prost(message, repeated, tag = "3")]
    /// `quantile`.
    pub quantile: Vec<Quantile>,
}

/// A classic bucket: observations up to its bound, cumulative.
#[derive(Clone, PartialEq, Message)]
pub struct Bucket {
    #[prost(uint64, tag = "1")]
    /// `cumulative_count`.
    pub cumulative_count: u64,
    #[prost(double, tag = "2")]
    /// `upper_bound`.
    pub upper_bound: f64,
    #[prost(message, optional, tag = "3")]
    /// `exemplar`: one observation in this bucket and its trace.
    pub exemplar: Option<Exemplar>,
}

/// An exemplar: labels (`trace_id`, `span_id`), the value and when.
#[derive(Clone, PartialEq, Message)]
pub struct Exemplar {
    #[prost(message, repeated, tag = "1")]
    /// `label`.
    pub label: Vec<LabelPair>,
    #[prost(double, tag = "2")]
    /// `value`.
    pub value: f64,
    #[prost(message, optional, tag = "3")]
    /// `timestamp`.
    pub timestamp: Option<Timestamp>,
}

/// `google.protobuf.Timestamp`: seconds and nanoseconds since the epoch.
#[derive(Clone, PartialEq, Message)]
pub struct Timestamp {
    #[prost(int64, tag = "1")]
    /// `seconds`.
    pub seconds: i64,
    #[prost(int32, tag = "2")]
    /// `nanos`.
    pub nanos: i32,
}

/// A run of native buckets: `offset` from the end of the previous run (from bucket 0 for the first), `length` buckets.
#[derive(Clone, PartialEq, Message)]
pub struct BucketSpan {
    #[prost(sint32, tag = "1")]
    /// `offset`.
    pub offset: i32,
    #[prost(uint32, tag = "2")]
    /// `length`.
    pub length: u32,
}

/// A histogram: classic buckets, native ones (schema, zero bucket, spans and deltas), or both.
#[derive(Clone, PartialEq, Message)]
pub struct Histogram {
    #[prost(uint64, tag = "1")]
    /// `sample_count`.
    pub sample_count: u64,
    #[prost(double, tag = "2")]
    /// `sample_sum`.
    pub sample_sum: f64,
    #[prost(message, repeated, tag = "3")]
    /// `bucket`.
    pub bucket: Vec<Bucket>,
    #[prost(sint32, tag = "5")]
    /// `schema`.
    pub schema: i32,
    #[prost(double, tag = "6")]
    /// `zero_threshold`.
    pub zero_threshold: f64,
    #[prost(uint64, tag = "7")]
    /// `zero_count`.
    pub zero_count: u64,
    #[prost(message, repeated, tag = "9")]
    /// `negative_span`.
    pub negative_span: Vec<BucketSpan>,
    #[prost(sint64, repeated, tag = "10")]
    /// `negative_delta`.
    pub negative_delta: Vec<i64>,
    #[prost(message, repeated, tag = "12")]
    /// `positive_span`.
    pub positive_span: Vec<BucketSpan>,
    #[prost(sint64, repeated, tag = "13")]
    /// `positive_delta`.
    pub positive_delta: Vec<i64>,
}

/// One series: labels and the value of its family's type.
#[derive(Clone, PartialEq, Message)]
pub struct Metric {
    #[prost(message, repeated, tag = "1")]
    /// `label`.
    pub label: Vec<LabelPair>,
    #[prost(message, optional, tag = "2")]
    /// `gauge`.
    pub gauge: Option<Gauge>,
    #[prost(message, optional, tag = "3")]
    /// `counter`.
    pub counter: Option<Counter>,
    #[prost(message, optional, tag = "4")]
    /// `summary`.
    pub summary: Option<Summary>,
    #[prost(message, optional, tag = "5")]
    /// `untyped`.
    pub untyped: Option<Untyped>,
    #[prost(message, optional, tag = "7")]
    /// `histogram`.
    pub histogram: Option<Histogram>,
}

/// A family: name, help, type (`COUNTER` 0, `GAUGE` 1, `SUMMARY` 2, `UNTYPED` 3, `HISTOGRAM` 4) and series.
#[derive(Clone, PartialEq, Message)]
pub struct MetricFamily {
    #[prost(string, tag = "1")]
    /// `name`.
    pub name: String,
    #[prost(string, tag = "2")]
    /// `help`.
    pub help: String,
    #[prost(int32, tag = "3")]
    /// `COUNTER` 0, `GAUGE` 1, `SUMMARY` 2, `UNTYPED` 3, `HISTOGRAM` 4.
    pub r#type: i32,
    #[prost(message, repeated, tag = "4")]
    /// `metric`.
    pub metric: Vec<Metric>,
}
