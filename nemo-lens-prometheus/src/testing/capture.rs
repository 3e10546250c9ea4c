//! [`Capture`]: a meter on a provider of its own, with a pull reader that
//! collects on every query.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{
    InstrumentKind, ManualReader, Pipeline, SdkMeterProvider, Temporality,
};
use opentelemetry_sdk::Resource;

use nemo_lens_core::__internal::{meter_with_owned, OwnedContext, Streams};
use nemo_lens_core::exemplar::Exemplar;
use nemo_lens_core::owned::{GatheredScope, OwnedMetric, OwnedScope, Registry};
use nemo_lens_core::{histogram_view, HistogramAggregation, Meter, PrometheusResourceLabels};

use super::lookup::{self, Query};
use crate::exposition::{families, text};

/// The scope name of the capture's meter: the one `setup_telemetry` uses,
/// so the exposition's `otel_scope_name` label reads as in production.
const SCOPE: &str = "nemo.lens";

/// A [`Meter`] whose measurements a test can read back: values by
/// instrument name and attributes, or the whole Prometheus text exposition.
///
/// Every query collects anew (cumulative, as a Prometheus scrape does), so
/// a query sees everything recorded through [`meter`](Capture::meter) up to
/// that point, and two captures never see each other's measurements.
///
/// Queries name the OpenTelemetry instrument (`app.rollout.finished`, not
/// `app_rollout_finished_total`) and filter by attributes given as
/// `(key, value)` pairs of strings. A value matches the attribute's
/// exported value as Prometheus labels it: `"8000"` matches the integer
/// 8000, `"true"` the boolean. A point matches when it carries every pair
/// given; `&[]` matches every point. The values of all matching points are
/// added up, so a filter that leaves some attributes out sums over them.
/// `None` means the instrument exists and no point of it matched.
///
/// # Panics
///
/// So that a test cannot pass for the wrong reason, a query fails at the
/// test's own line (the queries are `#[track_caller]`) when:
/// - no instrument of that name was created on the capture's meter (a
///   misspelled name would otherwise read as "never recorded"): the message
///   lists the names it has and the closest one;
/// - the instrument has series and none carries an attribute key the
///   filter names (a misspelled key): the message lists the keys it has;
/// - the query is of the wrong kind for the instrument: the message names
///   the one to call. [`last_value`](Capture::last_value) reads gauges,
///   [`sum`](Capture::sum) counters, up-down counters and histograms,
///   [`count`](Capture::count) histograms.
///
/// To assert that an instrument recorded nothing at all, or that no series
/// carries some attribute, read [`names`](Capture::names) or
/// [`attribute_sets`](Capture::attribute_sets).
///
/// ```should_panic
/// use nemo_lens::instruments::rl::RlMetrics;
/// use nemo_lens::testing::Capture;
/// use nemo_lens::Instruments;
///
/// let capture = Capture::new();
/// RlMetrics::default().reward_mean(0.5).record(capture.meter());
/// // Panics: the capture has no instrument named `rl.reward.men` ... (did you mean `rl.reward.mean`?)
/// capture.last_value("rl.reward.men", &[]);
/// ```
pub struct Capture {
    // Kept so the provider lives as long as the capture, whoever holds the
    // meter's clones.
    _provider: SdkMeterProvider,
    reader: Arc<ManualReader>,
    registry: Arc<Registry>,
    meter: Meter,
    /// What the exposition remembers between collections, as the exporter
    /// does: the first type and help seen for each family name.
    known: Mutex<families::Known>,
}

impl Capture {
    /// A capture with an empty provider: no resource (so no `target_info`
    /// family), cumulative temporality, histograms in explicit buckets unless
    /// their declaration pins an aggregation (whatever
    /// `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION` says, so
    /// results do not depend on the environment).
    pub fn new() -> Self {
        Self::with_registry(Registry::new())
    }

    /// A capture whose series end once idle for `timeout`, timed by
    /// `clock`: advance it to let time pass. Each reading sweeps first, as
    /// an exporter's does.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use nemo_lens::testing::{Capture, ManualClock};
    /// use nemo_lens::opentelemetry::KeyValue;
    ///
    /// let clock = Arc::new(ManualClock::new());
    /// let capture = Capture::with_idle_timeout(Duration::from_secs(60), clock.clone());
    /// let requests = capture.meter().u64_counter("app.requests").build();
    /// requests.add(1, &[KeyValue::new("server.address", "10.0.0.7:8000")]);
    /// assert_eq!(capture.sum("app.requests", &[]), Some(1.0));
    /// clock.advance(Duration::from_secs(61));
    /// assert_eq!(capture.sum("app.requests", &[]), None);
    /// ```
    pub fn with_idle_timeout(timeout: std::time::Duration, clock: Arc<super::ManualClock>) -> Self {
        Self::with_registry(Registry::with_idle_timeout(timeout, Some(clock)))
    }

    /// A capture whose series end as `expiry` says, timed by `clock`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use nemo_lens::opentelemetry::KeyValue;
    /// use nemo_lens::testing::{Capture, ManualClock};
    /// use nemo_lens::SeriesExpiry;
    ///
    /// let clock = Arc::new(ManualClock::new());
    /// let expiry = SeriesExpiry::never().carrying("server.address", Duration::from_secs(60));
    /// let capture = Capture::with_series_expiry(expiry, clock.clone());
    /// let requests = capture.meter().u64_counter("app.requests").build();
    /// requests.add(1, &[KeyValue::new("server.address", "10.0.0.7:8000")]);
    /// requests.add(1, &[KeyValue::new("route", "/v1/chat/completions")]);
    /// assert_eq!(capture.sum("app.requests", &[]), Some(2.0)); // a collection reads both
    /// clock.advance(Duration::from_secs(61));
    /// // The backend's series ended; the route's stays.
    /// let route = vec![("route".to_owned(), "/v1/chat/completions".to_owned())];
    /// assert_eq!(capture.attribute_sets("app.requests"), [route]);
    /// ```
    pub fn with_series_expiry(
        expiry: nemo_lens_core::SeriesExpiry,
        clock: Arc<super::ManualClock>,
    ) -> Self {
        Self::with_registry(Registry::with_series_expiry(expiry, Some(clock)))
    }

    /// A capture whose histograms keep the exemplars `filter` keeps
    /// ([`Capture::new`] keeps trace-based ones, the default).
    ///
    /// ```
    /// use nemo_lens::exemplar::{self, SpanIds};
    /// use nemo_lens::opentelemetry::trace::{SpanId, TraceId};
    /// use nemo_lens::testing::Capture;
    /// use nemo_lens::ExemplarFilter;
    ///
    /// let capture = Capture::with_exemplar_filter(ExemplarFilter::TraceBased);
    /// let ttft = capture
    ///     .meter()
    ///     .f64_histogram("ttft")
    ///     .with_unit("s")
    ///     .with_boundaries(vec![0.1, 0.25, 1.0])
    ///     .build();
    /// let request = SpanIds::new(TraceId::from(0x1d_u128), SpanId::from(0x2e_u64));
    /// exemplar::in_span(Some(request), || ttft.record(0.25, &[]));
    /// ttft.record(0.5, &[]); // outside any sampled span: none
    /// let exemplars = capture.exemplars("ttft", &[]);
    /// assert_eq!(exemplars.len(), 1);
    /// assert_eq!((exemplars[0].value, exemplars[0].span), (0.25, Some(request)));
    /// assert!(capture.openmetrics().contains(
    ///     "ttft_seconds_bucket{otel_scope_name=\"nemo.lens\",le=\"0.25\"} 1 # \
    ///      {trace_id=\"0000000000000000000000000000001d\",span_id=\"000000000000002e\"} 0.25"
    /// ));
    /// ```
    pub fn with_exemplar_filter(filter: nemo_lens_core::ExemplarFilter) -> Self {
        Self::with_registry(Registry::with_exemplar_filter(filter))
    }

    fn with_registry(registry: Arc<Registry>) -> Self {
        let reader = Arc::new(
            ManualReader::builder()
                .with_temporality(Temporality::Cumulative)
                .build(),
        );
        let provider = SdkMeterProvider::builder()
            .with_resource(Resource::builder_empty().build())
            .with_reader(SharedReader(Arc::clone(&reader)))
            .with_view(histogram_view(HistogramAggregation::ExplicitBucket))
            .build();
        let meter = meter_with_owned(
            provider.meter(SCOPE),
            nemo_lens_core::SemconvOptIn::none(),
            OwnedContext {
                registry: Arc::clone(&registry),
                scope: InstrumentationScope::builder(SCOPE).build(),
                streams: Arc::new(Streams {
                    histogram_aggregation: HistogramAggregation::ExplicitBucket,
                    ..Streams::default()
                }),
            },
        );
        Capture {
            _provider: provider,
            reader,
            registry,
            meter,
            known: Mutex::default(),
        }
    }

    /// The registry of the owned series its meter records into.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The meter to record through; clone it to hand it to the code under
    /// test.
    pub fn meter(&self) -> &Meter {
        &self.meter
    }

    /// The value of the gauge `name`: of its one point matching
    /// `attributes`, or the sum of the values of all that match.
    ///
    /// # Panics
    ///
    /// When `name` is not a gauge, or as the [type's docs](Capture#panics)
    /// say.
    #[track_caller]
    pub fn last_value(&self, name: &str, attributes: &[(&str, &str)]) -> Option<f64> {
        match self.query(name, attributes, Query::LastValue) {
            Ok(value) => value,
            Err(message) => panic!("{message}"),
        }
    }

    /// The total of the counter or up-down counter `name`, or the sum of the
    /// values a histogram `name` recorded, over its points matching
    /// `attributes`.
    ///
    /// # Panics
    ///
    /// When `name` is a gauge, or as the [type's docs](Capture#panics) say.
    #[track_caller]
    pub fn sum(&self, name: &str, attributes: &[(&str, &str)]) -> Option<f64> {
        match self.query(name, attributes, Query::Sum) {
            Ok(value) => value,
            Err(message) => panic!("{message}"),
        }
    }

    /// How many values the histogram `name` recorded, over its points
    /// matching `attributes`.
    ///
    /// # Panics
    ///
    /// When `name` is not a histogram, or as the [type's docs](Capture#panics)
    /// say.
    #[track_caller]
    pub fn count(&self, name: &str, attributes: &[(&str, &str)]) -> Option<u64> {
        // Counts are whole numbers, added up exactly below 2^53.
        match self.query(name, attributes, Query::Count) {
            Ok(count) => count.map(|count| count as u64),
            Err(message) => panic!("{message}"),
        }
    }

    /// The attributes of each point (each series) of the instrument `name`:
    /// `(key, value)` pairs sorted by key, values in their exported (label)
    /// spelling, the sets sorted. Empty when `name` recorded nothing. For
    /// asserting which series exist, attributes and all, where the value
    /// queries add matching points up.
    ///
    /// ```
    /// use nemo_lens::testing::Capture;
    /// use nemo_lens::Instruments;
    ///
    /// /// Requests served.
    /// #[derive(Instruments, Default)]
    /// struct Served {
    ///     /// Requests served.
    ///     #[counter("app.requests", unit = "{request}")]
    ///     requests: Option<u64>,
    ///     /// The serving port.
    ///     #[attribute("server.port")]
    ///     port: Option<u16>,
    /// }
    ///
    /// let capture = Capture::new();
    /// Served::default().requests(1).port(8000).record(capture.meter());
    /// Served::default().requests(1).record(capture.meter());
    /// assert_eq!(
    ///     capture.attribute_sets("app.requests"),
    ///     [vec![], vec![("server.port".to_owned(), "8000".to_owned())]]
    /// );
    /// ```
    #[track_caller]
    pub fn attribute_sets(&self, name: &str) -> Vec<Vec<(String, String)>> {
        let (collected, owned) = self.collect();
        if let Err(message) = self.check_name(name, &collected, &owned) {
            panic!("{message}");
        }
        let mut sets = Vec::new();
        for metric in owned_metrics(&owned, name) {
            sets.extend(metric.totals().into_iter().map(|(attributes, _, _)| {
                let mut set: Vec<(String, String)> = attributes
                    .iter()
                    .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                    .collect();
                set.sort();
                set
            }));
        }
        for scope in collected.scope_metrics() {
            for metric in scope.metrics().filter(|m| m.name() == name) {
                match metric.data() {
                    AggregatedMetrics::F64(data) => point_attributes(data, &mut sets),
                    AggregatedMetrics::U64(data) => point_attributes(data, &mut sets),
                    AggregatedMetrics::I64(data) => point_attributes(data, &mut sets),
                }
            }
        }
        sets.sort();
        sets
    }

    /// The instruments that have at least one series, sorted by name: a
    /// series exists once a record has carried its value, so a test can
    /// assert that nothing else was exported.
    ///
    /// ```
    /// use nemo_lens::instruments::rl::RlMetrics;
    /// use nemo_lens::testing::Capture;
    /// use nemo_lens::Instruments;
    ///
    /// let capture = Capture::new();
    /// RlMetrics::default().reward_mean(0.5).record(capture.meter());
    /// assert_eq!(capture.names(), ["rl.reward.mean"]);
    /// assert_eq!(capture.last_value("rl.kl_divergence", &[]), None);
    /// ```
    pub fn names(&self) -> Vec<String> {
        let (collected, owned) = self.collect();
        let mut names: Vec<String> = owned
            .iter()
            .flat_map(|scope| &scope.metrics)
            .map(|metric| metric.name.clone())
            .collect();
        for scope in collected.scope_metrics() {
            names.extend(
                scope
                    .metrics()
                    .filter(|metric| has_points(metric.data()))
                    .map(|metric| metric.name().to_owned()),
            );
        }
        names.sort();
        names.dedup();
        names
    }

    /// Everything recorded so far as the Prometheus exporter writes it in
    /// the text format: families sorted by name, series by their label
    /// values, no timestamps. There is no `target_info` family and no
    /// resource label (the capture's provider has no resource), and the
    /// only scope label is `otel_scope_name="nemo.lens"` (no version), so a
    /// snapshot changes only when names, labels, types, help or values do.
    pub fn exposition(&self) -> String {
        let families = self.families(Registry::gather_for_text);
        // The text writer writes only UTF-8 (names, labels and numbers).
        String::from_utf8(text::encode(&families)).expect("the text exposition is UTF-8")
    }

    /// What a scrape holds now, with the other libraries' families as
    /// `gather` reads them.
    fn families(&self, gather: fn(&Registry) -> Vec<GatheredScope>) -> Vec<families::Family> {
        let (collected, owned) = self.collect();
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        families::families(
            &collected,
            &owned,
            gather(&self.registry),
            &PrometheusResourceLabels::None,
            &mut known,
        )
    }

    /// The exemplars of the histogram `name` over its series matching
    /// `attributes`, oldest first within each series.
    #[track_caller]
    pub fn exemplars(&self, name: &str, attributes: &[(&str, &str)]) -> Vec<Exemplar> {
        let (collected, owned) = self.collect();
        if let Err(message) = self.check_name(name, &collected, &owned) {
            panic!("{message}");
        }
        let mut found = Vec::new();
        for metric in owned_metrics(&owned, name) {
            for (point, exemplars) in metric.exemplars() {
                if carries(&mut point.iter(), attributes) {
                    found.extend_from_slice(exemplars);
                }
            }
        }
        found
    }

    /// Everything recorded so far as the Prometheus exporter writes it in
    /// OpenMetrics 1.0 text (what Prometheus asks for first): the
    /// [`exposition`](Self::exposition) with exemplars on histogram buckets
    /// and `# EOF` at the end.
    pub fn openmetrics(&self) -> String {
        let families = self.families(Registry::gather);
        String::from_utf8(text::encode_openmetrics(&families)).expect("OpenMetrics text is UTF-8")
    }

    fn collect(&self) -> (ResourceMetrics, Vec<OwnedScope>) {
        self.registry.sweep();
        let mut collected = ResourceMetrics::default();
        // Fails only once the provider is shut down, which the capture
        // never does while it is alive.
        self.reader
            .collect(&mut collected)
            .expect("collecting from the capture's provider");
        (collected, self.registry.collect(false))
    }

    /// The instruments the capture knows: every owned one built on its
    /// meter (recorded or not) and every SDK one that reported a point.
    fn known_names(&self, collected: &ResourceMetrics, owned: &[OwnedScope]) -> Vec<String> {
        let mut names = self.registry.instrument_names();
        names.extend(
            owned
                .iter()
                .flat_map(|scope| &scope.metrics)
                .map(|metric| metric.name.clone()),
        );
        for scope in collected.scope_metrics() {
            names.extend(scope.metrics().map(|metric| metric.name().to_owned()));
        }
        names.sort();
        names.dedup();
        names
    }

    /// `Err` with the names the capture has when it has no instrument
    /// `name`.
    fn check_name(
        &self,
        name: &str,
        collected: &ResourceMetrics,
        owned: &[OwnedScope],
    ) -> Result<(), String> {
        let known = self.known_names(collected, owned);
        if known.iter().any(|known| known == name) {
            return Ok(());
        }
        Err(lookup::unknown_name(name, &known))
    }

    fn query(
        &self,
        name: &str,
        attributes: &[(&str, &str)],
        query: Query,
    ) -> Result<Option<f64>, String> {
        let (collected, owned) = self.collect();
        self.check_name(name, &collected, &owned)?;
        let mut found = Found::default();
        for metric in owned_metrics(&owned, name) {
            if let Query::LastValue = query {
                return Err(lookup::wrong_kind(
                    name,
                    "a histogram",
                    "count or sum",
                    query,
                ));
            }
            for (point, count, sum) in metric.totals() {
                found.point(point.iter(), attributes, || match query {
                    Query::Count => count as f64,
                    _ => sum,
                });
            }
        }
        for scope in collected.scope_metrics() {
            for metric in scope.metrics().filter(|m| m.name() == name) {
                match metric.data() {
                    AggregatedMetrics::F64(data) => {
                        matching(name, data, attributes, query, |v| v, &mut found)
                    }
                    AggregatedMetrics::U64(data) => {
                        matching(name, data, attributes, query, |v| v as f64, &mut found)
                    }
                    AggregatedMetrics::I64(data) => {
                        matching(name, data, attributes, query, |v| v as f64, &mut found)
                    }
                }?;
            }
        }
        found.check_keys(name, attributes)?;
        Ok(found.total)
    }
}

/// What a query found over the points of one instrument: the total of the
/// matching ones, and every attribute key any point carries.
#[derive(Default)]
struct Found {
    total: Option<f64>,
    points: usize,
    keys: std::collections::BTreeSet<String>,
}

impl Found {
    fn point<'a>(
        &mut self,
        point: impl Iterator<Item = &'a KeyValue>,
        wanted: &[(&str, &str)],
        value: impl FnOnce() -> f64,
    ) {
        let point: Vec<&KeyValue> = point.collect();
        self.points += 1;
        self.keys
            .extend(point.iter().map(|kv| kv.key.as_str().to_owned()));
        if carries(&mut point.into_iter(), wanted) {
            *self.total.get_or_insert(0.0) += value();
        }
    }

    /// `Err` naming the keys there are when the instrument has series and
    /// none carries a key of the filter.
    fn check_keys(&self, name: &str, wanted: &[(&str, &str)]) -> Result<(), String> {
        match wanted.iter().find(|(key, _)| !self.keys.contains(*key)) {
            Some((key, _)) if self.points > 0 => Err(lookup::unknown_key(name, key, &self.keys)),
            _ => Ok(()),
        }
    }
}

impl Default for Capture {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Capture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capture")
            .field("meter", &self.meter)
            .finish_non_exhaustive()
    }
}

/// The owned instruments called `name`.
fn owned_metrics<'a>(
    owned: &'a [OwnedScope],
    name: &'a str,
) -> impl Iterator<Item = &'a OwnedMetric> {
    owned
        .iter()
        .flat_map(|scope| &scope.metrics)
        .filter(move |metric| metric.name == name)
}

/// Adds to `found` the values `query` reads from the points of `data`;
/// `Err` when `data` is of a kind `query` does not read.
fn matching<T: Copy>(
    name: &str,
    data: &MetricData<T>,
    attributes: &[(&str, &str)],
    query: Query,
    as_f64: impl Fn(T) -> f64,
    found: &mut Found,
) -> Result<(), String> {
    match (data, query) {
        (MetricData::Gauge(gauge), Query::LastValue) => {
            for p in gauge.data_points() {
                found.point(p.attributes(), attributes, || as_f64(p.value()));
            }
        }
        (MetricData::Gauge(_), _) => {
            return Err(lookup::wrong_kind(name, "a gauge", "last_value", query))
        }
        (MetricData::Sum(sum), Query::Sum) => {
            for p in sum.data_points() {
                found.point(p.attributes(), attributes, || as_f64(p.value()));
            }
        }
        (MetricData::Sum(_), _) => {
            return Err(lookup::wrong_kind(
                name,
                "a counter or up-down counter",
                "sum",
                query,
            ))
        }
        (MetricData::Histogram(histogram), Query::Sum | Query::Count) => {
            for p in histogram.data_points() {
                found.point(p.attributes(), attributes, || match query {
                    Query::Count => p.count() as f64,
                    _ => as_f64(p.sum()),
                });
            }
        }
        (MetricData::ExponentialHistogram(histogram), Query::Sum | Query::Count) => {
            for p in histogram.data_points() {
                found.point(p.attributes(), attributes, || match query {
                    Query::Count => p.count() as f64,
                    _ => as_f64(p.sum()),
                });
            }
        }
        (MetricData::Histogram(_) | MetricData::ExponentialHistogram(_), _) => {
            return Err(lookup::wrong_kind(
                name,
                "a histogram",
                "count or sum",
                query,
            ))
        }
    }
    Ok(())
}

/// Pushes the attributes of each point of `data` onto `sets`, sorted by key.
fn point_attributes<T>(data: &MetricData<T>, sets: &mut Vec<Vec<(String, String)>>) {
    let set = |attributes: &mut dyn Iterator<Item = &KeyValue>| {
        let mut set: Vec<(String, String)> = attributes
            .map(|kv| (kv.key.to_string(), kv.value.to_string()))
            .collect();
        set.sort();
        set
    };
    match data {
        MetricData::Gauge(gauge) => {
            sets.extend(gauge.data_points().map(|p| set(&mut p.attributes())));
        }
        MetricData::Sum(sum) => sets.extend(sum.data_points().map(|p| set(&mut p.attributes()))),
        MetricData::Histogram(histogram) => {
            sets.extend(histogram.data_points().map(|p| set(&mut p.attributes())));
        }
        MetricData::ExponentialHistogram(histogram) => {
            sets.extend(histogram.data_points().map(|p| set(&mut p.attributes())));
        }
    }
}

/// Whether a point's attributes include every `(key, value)` pair, values
/// compared in their exported (label) spelling.
/// Whether an SDK metric has a point (the SDK leaves out instruments that
/// have none, but an observable whose callback reported nothing can be
/// there empty).
fn has_points(data: &AggregatedMetrics) -> bool {
    fn any<T>(data: &MetricData<T>) -> bool {
        match data {
            MetricData::Gauge(gauge) => gauge.data_points().next().is_some(),
            MetricData::Sum(sum) => sum.data_points().next().is_some(),
            MetricData::Histogram(histogram) => histogram.data_points().next().is_some(),
            MetricData::ExponentialHistogram(histogram) => histogram.data_points().next().is_some(),
        }
    }
    match data {
        AggregatedMetrics::F64(data) => any(data),
        AggregatedMetrics::U64(data) => any(data),
        AggregatedMetrics::I64(data) => any(data),
    }
}

fn carries(point: &mut dyn Iterator<Item = &KeyValue>, wanted: &[(&str, &str)]) -> bool {
    let point: Vec<&KeyValue> = point.collect();
    wanted.iter().all(|(key, value)| {
        point
            .iter()
            .any(|kv| kv.key.as_str() == *key && kv.value.to_string() == *value)
    })
}

/// The capture's reader, shared with the provider that owns a reader of its
/// own: the same pattern as the Prometheus exporter's `PrometheusReader`.
#[derive(Debug)]
struct SharedReader(Arc<ManualReader>);

impl MetricReader for SharedReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline)
    }

    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(rm)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, _kind: InstrumentKind) -> Temporality {
        Temporality::Cumulative
    }
}
