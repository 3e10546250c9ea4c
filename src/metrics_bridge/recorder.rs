//! The recorder: look-ups on the request path, registration and
//! description under one lock, expiry handed back by collections.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_util::{MetricKind, MetricKindMask};
use nemo_lens_core::export::bridge::{cardinality_limit, BridgeState, SummaryFamily};
use nemo_lens_core::{HistogramAggregation, TelemetryHandle};
use opentelemetry::metrics::Meter;
use opentelemetry::KeyValue;

use super::family::{
    Described, Entry, Expire, Family, Instrument, Kind, Labels, NewInstrument, Observed,
};
use super::handles::{CounterSeries, GaugeSeries, HistogramSeries, SeriesKey};
use super::matcher::{BucketRules, Matcher};
use super::names::{sanitize_label_key, sanitize_metric_name};
use super::registry::{Registry, RegistryKey, Removal};
use super::summary::{Summaries, SummaryConfig};

/// A recorder of the `metrics` facade that exports through nemo-lens: on
/// its Prometheus endpoint under the names `metrics-exporter-prometheus`
/// writes, over OTLP as OpenTelemetry instruments. Made by
/// [`MetricsBridge::build`](super::MetricsBridge::build); cheap to clone.
#[derive(Clone)]
pub struct BridgeRecorder {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for BridgeRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BridgeRecorder")
            .field("exporting", &self.inner.meter.is_some())
            .finish_non_exhaustive()
    }
}

/// What the recorder is built from.
pub(crate) struct Settings {
    pub(crate) buckets: BucketRules,
    /// Sanitized; for names no bucket matcher selects.
    pub(crate) summary_matchers: Vec<Matcher>,
    pub(crate) summary_config: SummaryConfig,
    /// Sanitized keys, each once.
    pub(crate) global_labels: Vec<(String, String)>,
    pub(crate) idle_mask: MetricKindMask,
    pub(crate) idle_timeout: Option<Duration>,
}

pub(crate) struct Inner {
    /// `None` when telemetry records nothing: every handle is a no-op.
    pub(crate) meter: Option<Meter>,
    settings: Settings,
    pub(crate) counters: Registry<Key, CounterSeries>,
    pub(crate) gauges: Registry<Key, GaugeSeries>,
    pub(crate) histograms: Registry<Key, HistogramSeries>,
    #[cfg(feature = "metrics-bridge-023")]
    pub(crate) counters_023: Registry<metrics_023::Key, CounterSeries>,
    #[cfg(feature = "metrics-bridge-023")]
    pub(crate) gauges_023: Registry<metrics_023::Key, GaugeSeries>,
    #[cfg(feature = "metrics-bridge-023")]
    pub(crate) histograms_023: Registry<metrics_023::Key, HistogramSeries>,
    /// Every name described or registered, by sanitized name.
    families: Mutex<HashMap<String, Family>>,
    /// Names as given to `describe_*` already noted: a macro with an inline
    /// `description:` describes on every call, so repeats must be cheap.
    described: ArcSwap<HashSet<String>>,
    exposed: Arc<Exposed>,
    /// Keys registered to series recording nowhere (names not exported),
    /// bounded by the cardinality limit.
    unexported: AtomicUsize,
    me: Weak<Inner>,
}

/// What the Prometheus exposition reads of a recorder beside its
/// instruments, found through its meter's scope: only endpoints collecting
/// this recorder's instruments show it.
pub(crate) struct Exposed {
    summaries: Summaries,
    /// HELP by sanitized name; the first description of a name wins, as in
    /// `metrics-exporter-prometheus`. Kept apart from the instrument
    /// because `describe_*` may come after it was built, which the SDK
    /// cannot change.
    help: RwLock<HashMap<String, String>>,
    /// The aggregation of each histogram by OpenTelemetry name, noted
    /// before it is built: the provider's view reads it from here, so the
    /// bridge's matchers decide for its own histograms only.
    aggregations: RwLock<HashMap<String, HistogramAggregation>>,
}

impl Exposed {
    fn describe(&self, name: &str, help: &str) {
        if help.is_empty() {
            return;
        }
        self.help
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_owned())
            .or_insert_with(|| help.to_owned());
    }
}

impl BridgeState for Exposed {
    fn summaries(&self) -> Vec<SummaryFamily> {
        self.summaries.families()
    }

    fn help(&self, prometheus_name: &str) -> Option<String> {
        self.help
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(prometheus_name)
            .cloned()
    }

    fn histogram_aggregation(&self, otel_name: &str) -> Option<HistogramAggregation> {
        self.aggregations
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(otel_name)
            .copied()
    }
}

impl BridgeRecorder {
    pub(crate) fn new(telemetry: &TelemetryHandle, settings: Settings) -> Self {
        let exposed = Arc::new(Exposed {
            summaries: Summaries::new(settings.summary_config.clone()),
            help: RwLock::default(),
            aggregations: RwLock::default(),
        });
        let state: Weak<dyn BridgeState> = Arc::downgrade(&exposed) as Weak<Exposed>;
        let meter = nemo_lens_core::export::bridge::meter(telemetry, state);
        BridgeRecorder {
            inner: Arc::new_cyclic(|me| Inner {
                meter,
                settings,
                exposed,
                counters: Registry::new(),
                gauges: Registry::new(),
                histograms: Registry::new(),
                #[cfg(feature = "metrics-bridge-023")]
                counters_023: Registry::new(),
                #[cfg(feature = "metrics-bridge-023")]
                gauges_023: Registry::new(),
                #[cfg(feature = "metrics-bridge-023")]
                histograms_023: Registry::new(),
                families: Mutex::new(HashMap::new()),
                described: ArcSwap::default(),
                unexported: AtomicUsize::new(0),
                me: me.clone(),
            }),
        }
    }
}

/// A key's name and labels, whichever `metrics` version it comes from.
pub(crate) struct KeyParts<'a> {
    pub(crate) name: &'a str,
    pub(crate) labels: Vec<(&'a str, &'a str)>,
}

impl Inner {
    /// The labels of a series: the global labels, then the key's (a key's
    /// own label wins over a global one, and the last of duplicate keys
    /// wins, as in `metrics-exporter-prometheus`), sorted so that keys
    /// differing only in order or in what sanitizing changes find one
    /// series.
    fn labels(&self, labels: &[(&str, &str)]) -> Labels {
        let mut merged: Labels = self.settings.global_labels.clone();
        for (key, value) in labels {
            let key = sanitize_label_key(key);
            match merged.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => *v = (*value).to_owned(),
                None => merged.push((key, (*value).to_owned())),
            }
        }
        merged.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        merged
    }

    fn idle_timeout(&self, kind: MetricKind) -> Option<Duration> {
        self.settings
            .idle_timeout
            .filter(|_| self.settings.idle_mask.matches(kind))
    }

    /// The family of `name` ready to take a series of `kind`, building its
    /// instrument on first use; `None` (warned once) when the name has
    /// another kind or the SDK cannot take it.
    fn family<'f>(
        &self,
        families: &'f mut HashMap<String, Family>,
        name: &str,
        kind: Kind,
    ) -> Option<&'f mut Instrument> {
        let meter = self.meter.as_ref()?;
        let family = families.entry(name.to_owned()).or_default();
        match &family.exported {
            Some((existing, _)) if *existing != kind => {
                if !family.warned {
                    family.warned = true;
                    tracing::warn!(
                        target: "nemo_lens",
                        metric = name,
                        "metric `{name}` is recorded as a {} and as a {}; only the {} is \
                         exported (one metric family per name), the {} records are dropped",
                        existing.as_str(),
                        kind.as_str(),
                        existing.as_str(),
                        kind.as_str(),
                    );
                }
                return None;
            }
            Some(_) => {}
            None => {
                let Some(otel_name) = nemo_lens_core::export::bridge::otel_name(name) else {
                    if !family.warned {
                        family.warned = true;
                        tracing::warn!(
                            target: "nemo_lens",
                            metric = name,
                            "metric `{name}` cannot be an OpenTelemetry instrument name \
                             (it is empty or longer than 255 characters); it is not exported"
                        );
                    }
                    return None;
                };
                let new = NewInstrument {
                    meter,
                    otel_name,
                    described: family.described.as_ref(),
                };
                let instrument = match kind {
                    Kind::Counter => new.counter(
                        self.idle_timeout(MetricKind::Counter),
                        self.expiry(Inner::unregister_counter, Inner::reregister_counter),
                    ),
                    Kind::Gauge => new.gauge(
                        self.idle_timeout(MetricKind::Gauge),
                        self.expiry(Inner::unregister_gauge, Inner::reregister_gauge),
                    ),
                    Kind::Histogram => {
                        let buckets = &self.settings.buckets;
                        let summarised = buckets.matched(name).is_none()
                            && self
                                .settings
                                .summary_matchers
                                .iter()
                                .any(|m| m.matches(name));
                        // OTLP gets a summarised name's whole distribution.
                        let buckets = if summarised {
                            None
                        } else {
                            buckets.for_name(name)
                        };
                        let aggregation = match buckets {
                            Some(_) => HistogramAggregation::ExplicitBucket,
                            None => HistogramAggregation::Base2Exponential,
                        };
                        self.exposed
                            .aggregations
                            .write()
                            .unwrap_or_else(PoisonError::into_inner)
                            .insert(new.otel_name.clone(), aggregation);
                        new.histogram(buckets, summarised)
                    }
                };
                family.exported = Some((kind, instrument));
            }
        }
        family.exported.as_mut().map(|(_, instrument)| instrument)
    }

    /// What a collection calls with an idle series of an observable
    /// instrument that nobody holds: its keys leave the look-up, unless a
    /// handle to it was taken meanwhile or a look-up is still reading the
    /// old entry; then they go back and the series stays.
    fn expiry<T: Send + Sync + 'static>(
        &self,
        unregister: fn(&Inner, &SeriesKey, &Arc<T>) -> Removal,
        reregister: fn(&Inner, &SeriesKey, &Arc<T>),
    ) -> Expire<T> {
        let me = self.me.clone();
        Box::new(move |entry: &Entry<T>| {
            let Some(inner) = me.upgrade() else {
                return false;
            };
            for (removed, key) in entry.keys.iter().enumerate() {
                if unregister(&inner, key, &entry.series) == Removal::Busy {
                    for key in &entry.keys[..removed] {
                        reregister(&inner, key, &entry.series);
                    }
                    return false;
                }
            }
            // Held now by `entry` and by a handle a look-up gave out before
            // the keys left, if any. The series lock the caller holds keeps
            // registrations out, so putting the keys back cannot lose to
            // one.
            if Arc::strong_count(&entry.series) > 1 {
                for key in &entry.keys {
                    reregister(&inner, key, &entry.series);
                }
                return false;
            }
            true
        })
    }

    fn unregister_counter(&self, key: &SeriesKey, series: &Arc<CounterSeries>) -> Removal {
        match key {
            SeriesKey::V024(key) => self.counters.remove(key, series),
            #[cfg(feature = "metrics-bridge-023")]
            SeriesKey::V023(key) => self.counters_023.remove(key, series),
        }
    }

    fn reregister_counter(&self, key: &SeriesKey, series: &Arc<CounterSeries>) {
        match key {
            SeriesKey::V024(key) => {
                self.counters.insert(key.clone(), Arc::clone(series));
            }
            #[cfg(feature = "metrics-bridge-023")]
            SeriesKey::V023(key) => {
                self.counters_023.insert(key.clone(), Arc::clone(series));
            }
        }
    }

    fn unregister_gauge(&self, key: &SeriesKey, series: &Arc<GaugeSeries>) -> Removal {
        match key {
            SeriesKey::V024(key) => self.gauges.remove(key, series),
            #[cfg(feature = "metrics-bridge-023")]
            SeriesKey::V023(key) => self.gauges_023.remove(key, series),
        }
    }

    fn reregister_gauge(&self, key: &SeriesKey, series: &Arc<GaugeSeries>) {
        match key {
            SeriesKey::V024(key) => {
                self.gauges.insert(key.clone(), Arc::clone(series));
            }
            #[cfg(feature = "metrics-bridge-023")]
            SeriesKey::V023(key) => {
                self.gauges_023.insert(key.clone(), Arc::clone(series));
            }
        }
    }

    fn lock_families(&self) -> std::sync::MutexGuard<'_, HashMap<String, Family>> {
        self.families.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The counter series of `key` in `registry` (the 0.24 or the 0.23
    /// look-up): found without a lock, or registered on the key's first use.
    /// `None` when nothing records (the handle is then a no-op).
    #[inline]
    pub(crate) fn counter<K: RegistryKey + Clone>(
        &self,
        registry: &Registry<K, CounterSeries>,
        key: &K,
        parts: for<'k> fn(&'k K) -> KeyParts<'k>,
        series_key: fn(K) -> SeriesKey,
    ) -> Option<Arc<CounterSeries>> {
        self.meter.as_ref()?;
        if let Some(series) = registry.get(key) {
            return Some(series);
        }
        self.new_counter(parts(key), series_key(key.clone()), |_, s| {
            registry.insert(key.clone(), s)
        })
    }

    /// [`counter`](Self::counter) for gauges.
    #[inline]
    pub(crate) fn gauge<K: RegistryKey + Clone>(
        &self,
        registry: &Registry<K, GaugeSeries>,
        key: &K,
        parts: for<'k> fn(&'k K) -> KeyParts<'k>,
        series_key: fn(K) -> SeriesKey,
    ) -> Option<Arc<GaugeSeries>> {
        self.meter.as_ref()?;
        if let Some(series) = registry.get(key) {
            return Some(series);
        }
        self.new_gauge(parts(key), series_key(key.clone()), |_, s| {
            registry.insert(key.clone(), s)
        })
    }

    /// [`counter`](Self::counter) for histograms.
    #[inline]
    pub(crate) fn histogram<K: RegistryKey + Clone>(
        &self,
        registry: &Registry<K, HistogramSeries>,
        key: &K,
        parts: for<'k> fn(&'k K) -> KeyParts<'k>,
    ) -> Option<Arc<HistogramSeries>> {
        self.meter.as_ref()?;
        if let Some(series) = registry.get(key) {
            return Some(series);
        }
        self.new_histogram(parts(key), |_, s| registry.insert(key.clone(), s))
    }

    /// A key's first counter registration: its series, found by its
    /// labels or built, and made findable by `insert` (which returns the
    /// key's series and whether it was newly registered).
    pub(crate) fn new_counter(
        &self,
        parts: KeyParts<'_>,
        key: SeriesKey,
        insert: impl FnOnce(&Self, Arc<CounterSeries>) -> (Arc<CounterSeries>, bool),
    ) -> Option<Arc<CounterSeries>> {
        let name = sanitize_metric_name(parts.name);
        let mut families = self.lock_families();
        let Some(Instrument::Counter { observed, .. }) =
            self.family(&mut families, &name, Kind::Counter)
        else {
            return self.unexported(|| CounterSeries::new(Vec::new()), insert);
        };
        Some(register_observed(
            observed,
            self.labels(&parts.labels),
            key,
            CounterSeries::new,
            |series| insert(self, series),
        ))
    }

    pub(crate) fn new_gauge(
        &self,
        parts: KeyParts<'_>,
        key: SeriesKey,
        insert: impl FnOnce(&Self, Arc<GaugeSeries>) -> (Arc<GaugeSeries>, bool),
    ) -> Option<Arc<GaugeSeries>> {
        let name = sanitize_metric_name(parts.name);
        let mut families = self.lock_families();
        let Some(Instrument::Gauge { observed, .. }) =
            self.family(&mut families, &name, Kind::Gauge)
        else {
            return self.unexported(|| GaugeSeries::new(Vec::new()), insert);
        };
        Some(register_observed(
            observed,
            self.labels(&parts.labels),
            key,
            GaugeSeries::new,
            |series| insert(self, series),
        ))
    }

    pub(crate) fn new_histogram(
        &self,
        parts: KeyParts<'_>,
        insert: impl FnOnce(&Self, Arc<HistogramSeries>) -> (Arc<HistogramSeries>, bool),
    ) -> Option<Arc<HistogramSeries>> {
        let name = sanitize_metric_name(parts.name);
        let mut families = self.lock_families();
        let Some(Instrument::Histogram {
            histogram,
            summarised,
            by_labels,
        }) = self.family(&mut families, &name, Kind::Histogram)
        else {
            return self.unexported(HistogramSeries::unexported, insert);
        };
        let labels = self.labels(&parts.labels);
        if let Some(existing) = by_labels.get(&labels) {
            return Some(insert(self, Arc::clone(existing)).0);
        }
        let attributes = attributes(&labels);
        let summary = summarised.then(|| self.exposed.summaries.new_series(labels.clone()));
        let series = Arc::new(HistogramSeries::new(
            histogram.bind(&attributes),
            summary.clone(),
        ));
        let (registered, inserted) = insert(self, Arc::clone(&series));
        // Only the registered series is summarised: a second summary of
        // one label set would be a duplicate sample.
        if inserted {
            if let Some(summary) = summary {
                self.exposed.summaries.add(&name, summary);
            }
            by_labels.insert(labels, series);
        }
        Some(registered)
    }

    /// A key of a name that is not exported (used as another kind, or one
    /// the SDK refuses) registered to a series recording nowhere, so its
    /// macro calls skip this path; `None` (a no-op handle, made on every
    /// call) once the cardinality limit's worth of such keys is reached.
    fn unexported<T>(
        &self,
        make: impl FnOnce() -> T,
        insert: impl FnOnce(&Self, Arc<T>) -> (Arc<T>, bool),
    ) -> Option<Arc<T>> {
        if self.unexported.load(Ordering::Relaxed) >= cardinality_limit() {
            return None;
        }
        let (series, inserted) = insert(self, Arc::new(make()));
        if inserted {
            self.unexported.fetch_add(1, Ordering::Relaxed);
        }
        Some(series)
    }

    /// Notes what `describe_*` says of `name`: HELP on the Prometheus
    /// endpoint whenever it comes; on OTLP, the description and unit of the
    /// instrument when it comes before the name's first registration.
    /// Never creates a series.
    pub(crate) fn describe(&self, name: &str, unit: Option<Unit>, description: &str) {
        if self.described.load().contains(name) {
            return;
        }
        self.described.rcu(|known| {
            let mut known = HashSet::clone(known);
            known.insert(name.to_owned());
            known
        });
        let name = sanitize_metric_name(name);
        self.exposed.describe(&name, description);
        let mut families = self.lock_families();
        let family = families.entry(name).or_default();
        if family.described.is_none() {
            family.described = Some(Described {
                unit,
                description: description.to_owned(),
            });
        }
    }
}

/// Registers `key` of a counter or gauge with `labels`: to the series
/// with those labels, or to a new one; past the cardinality limit to the
/// overflow series, without registering the key (keys past the limit are
/// unbounded, and would stay in the look-up for good).
fn register_observed<T>(
    observed: &Observed<T>,
    labels: Labels,
    key: SeriesKey,
    make: impl FnOnce(Vec<KeyValue>) -> T,
    insert: impl FnOnce(Arc<T>) -> (Arc<T>, bool),
) -> Arc<T> {
    let mut series = observed.lock();
    if let Some(entry) = series.by_labels.get_mut(&labels) {
        let (registered, inserted) = insert(Arc::clone(&entry.series));
        if inserted {
            entry.keys.push(key);
        }
        return registered;
    }
    if series.by_labels.len() >= cardinality_limit() {
        let overflow = series
            .overflow
            .get_or_insert_with(|| Arc::new(make(overflow_attributes())));
        return Arc::clone(overflow);
    }
    let new = Arc::new(make(attributes(&labels)));
    let (registered, inserted) = insert(Arc::clone(&new));
    // Not inserted: another thread registered the key first, and its
    // series, with these labels, would have been found above.
    if inserted {
        series.by_labels.insert(
            labels,
            Entry {
                series: new,
                keys: vec![key],
            },
        );
    }
    registered
}

fn attributes(labels: &Labels) -> Vec<KeyValue> {
    labels
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect()
}

/// The attributes of the series past the cardinality limit: the SDK's
/// overflow marker alone, as on its own overflow series.
fn overflow_attributes() -> Vec<KeyValue> {
    vec![KeyValue::new(
        nemo_lens_core::export::overflow::OVERFLOW_ATTRIBUTE,
        true,
    )]
}

fn parts(key: &Key) -> KeyParts<'_> {
    KeyParts {
        name: key.name(),
        labels: key.labels().map(|l| (l.key(), l.value())).collect(),
    }
}

impl Recorder for BridgeRecorder {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.inner.describe(key.as_str(), unit, &description);
    }

    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.inner.describe(key.as_str(), unit, &description);
    }

    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.inner.describe(key.as_str(), unit, &description);
    }

    #[inline]
    fn register_counter(&self, key: &Key, _metadata: &Metadata<'_>) -> Counter {
        let inner = &self.inner;
        inner
            .counter(&inner.counters, key, parts, SeriesKey::V024)
            .map_or_else(Counter::noop, Counter::from_arc)
    }

    #[inline]
    fn register_gauge(&self, key: &Key, _metadata: &Metadata<'_>) -> Gauge {
        let inner = &self.inner;
        inner
            .gauge(&inner.gauges, key, parts, SeriesKey::V024)
            .map_or_else(Gauge::noop, Gauge::from_arc)
    }

    #[inline]
    fn register_histogram(&self, key: &Key, _metadata: &Metadata<'_>) -> Histogram {
        let inner = &self.inner;
        inner
            .histogram(&inner.histograms, key, parts)
            .map_or_else(Histogram::noop, Histogram::from_arc)
    }
}

#[cfg(all(test, feature = "prometheus"))]
mod tests {
    use std::sync::Mutex;

    use metrics::{counter, gauge};
    use nemo_lens_core::export::prometheus::{Format, PrometheusRenderer};
    use nemo_lens_core::telemetry::PrometheusResourceLabels;
    use nemo_lens_core::{EnvLookup, NemoLensConfig, SetupOptions, TelemetryHandle};

    use super::*;
    use crate::metrics_bridge::MetricsBridge;

    /// The cardinality limit is process-wide: these tests take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn telemetry(limit: &str) -> (TelemetryHandle, PrometheusRenderer) {
        let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
            ("NEMO_LENS_ENABLED", "true"),
            ("NEMO_LENS_CARDINALITY_LIMIT", limit),
        ]))
        .expect("config");
        let (reader, renderer) =
            PrometheusRenderer::new(&PrometheusResourceLabels::None).expect("renderer");
        let telemetry = SetupOptions::new()
            .env(EnvLookup::from_pairs::<&str, &str>([]))
            .probe_gpus(false)
            .allow_reinit(true)
            .set_global(false)
            .metric_reader(reader)
            .setup(&config, 0, 1)
            .expect("setup");
        (telemetry, renderer)
    }

    fn text(renderer: &PrometheusRenderer) -> String {
        String::from_utf8(renderer.render_as(Format::Text).expect("render").body).expect("utf-8")
    }

    #[test]
    fn keys_past_the_cardinality_limit_stay_out_of_the_look_up() {
        let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
        let (telemetry, renderer) = telemetry("4");
        let recorder = MetricsBridge::new().build(&telemetry);
        metrics::with_local_recorder(&recorder, || {
            for worker in 0..1_000 {
                let worker = worker.to_string();
                counter!("past_limit_total", "worker" => worker.clone()).increment(1);
                gauge!("past_limit_gauge", "worker" => worker.clone()).increment(1.0);
                // Not exported (already a counter): bounded too.
                gauge!("past_limit_total", "worker" => worker).increment(1.0);
            }
        });
        assert_eq!(recorder.inner.counters.len(), 4);
        assert_eq!(recorder.inner.gauges.len(), 4 + 4);
        let text = text(&renderer);
        for line in [
            "past_limit_total{otel_metric_overflow=\"true\"} 996\n",
            "past_limit_gauge{otel_metric_overflow=\"true\"} 996\n",
            "past_limit_total{worker=\"3\"} 1\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }

    /// Collections expiring every idle series while another thread records
    /// through fresh handles: every key in the look-up reaches the series
    /// its labels have in the export, and every exported series is reached
    /// by its keys (no orphan exported for good beside a newer one).
    #[test]
    fn expiry_racing_registration_leaves_no_orphan() {
        let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
        let (telemetry, renderer) = telemetry("2000");
        let recorder = MetricsBridge::new()
            .idle_timeout(MetricKindMask::COUNTER, Some(Duration::ZERO))
            .build(&telemetry);
        let key = Key::from_parts("expiry_race_total", vec![metrics::Label::new("a", "1")]);
        let mut expired_rounds = 0;
        for _ in 0..200 {
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    for _ in 0..5 {
                        let _ = text(&renderer);
                    }
                });
                scope.spawn(|| {
                    metrics::with_local_recorder(&recorder, || {
                        for _ in 0..50 {
                            counter!("expiry_race_total", "a" => "1").increment(1);
                        }
                    })
                });
            });
            let families = recorder.inner.lock_families();
            let Some(Family {
                exported: Some((_, Instrument::Counter { observed, .. })),
                ..
            }) = families.get("expiry_race_total")
            else {
                panic!("the counter family");
            };
            let series = observed.lock();
            assert!(series.by_labels.len() <= 1);
            let registered = recorder.inner.counters.get(&key);
            match series.by_labels.values().next() {
                Some(entry) => {
                    assert_eq!(entry.keys.len(), 1);
                    let registered = registered.expect("the exported series' key");
                    assert!(Arc::ptr_eq(&registered, &entry.series));
                }
                None => {
                    expired_rounds += 1;
                    assert!(registered.is_none(), "a key to an unexported series");
                }
            }
        }
        assert!(expired_rounds > 0, "the series never expired");
    }
}
