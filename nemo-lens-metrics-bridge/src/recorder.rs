//! The recorder: look-ups on the request path, registration and
//! description under one lock, expiry handed back by collections.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use metrics::{Key, Unit};
use metrics_util::{MetricKind, MetricKindMask};
use nemo_lens_core::__internal::bridge::{cardinality_limit, BridgeState, SummaryFamily};
use nemo_lens_core::owned::expiry::Holder;
use nemo_lens_core::HistogramAggregation;
use nemo_lens_core::Meter;
use nemo_lens_telemetry::TelemetryHandle;
use opentelemetry::KeyValue;

use super::family::{
    Described, Entry, Expire, Family, Instrument, Kind, Labels, NewInstrument, Observed,
};
use super::handles::{CounterSeries, GaugeSeries, HistogramSeries, Idles, SeriesKey};
use super::matcher::{BucketRules, Matcher};
use super::names::{sanitize_label_key, sanitize_metric_name};
use super::registry::{Registry, RegistryKey, Removal};
use super::summary::{Summaries, SummaryConfig};
use super::timeouts::Timeouts;

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
    #[cfg(feature = "metrics-023")]
    pub(crate) counters_023: Registry<metrics_023::Key, CounterSeries>,
    #[cfg(feature = "metrics-023")]
    pub(crate) gauges_023: Registry<metrics_023::Key, GaugeSeries>,
    #[cfg(feature = "metrics-023")]
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
        let meter = nemo_lens_telemetry::__internal::bridge_meter(telemetry, state);
        BridgeRecorder {
            inner: Arc::new_cyclic(|me| Inner {
                meter,
                settings,
                exposed,
                counters: Registry::new(),
                gauges: Registry::new(),
                histograms: Registry::new(),
                #[cfg(feature = "metrics-023")]
                counters_023: Registry::new(),
                #[cfg(feature = "metrics-023")]
                gauges_023: Registry::new(),
                #[cfg(feature = "metrics-023")]
                histograms_023: Registry::new(),
                families: Mutex::new(HashMap::new()),
                described: ArcSwap::default(),
                unexported: AtomicUsize::new(0),
                me: me.clone(),
            }),
        }
        .swept()
    }

    /// Has the meter's registry sweep the histograms at each collection,
    /// as it sweeps its own series.
    fn swept(self) -> Self {
        if let Some(registry) = self.inner.meter.as_ref().and_then(Meter::registry) {
            let holder: Arc<dyn Holder> = self.inner.clone();
            registry.add_holder(Arc::downgrade(&holder));
        }
        self
    }
}

impl Holder for Inner {
    fn sweep(&self, _now: Duration, _timeout: Option<Duration>) {
        // Timed as counters and gauges are: the bridge's own timeout
        // first, else the registry's for the histogram and its labels.
        let own = self
            .settings
            .idle_timeout
            .filter(|_| self.settings.idle_mask.matches(MetricKind::Histogram));
        let registry = self.meter.as_ref().and_then(Meter::registry);
        if own.is_none() && registry.is_none_or(|r| r.series_expiry().is_never()) {
            // Nothing can end: no need for the families' lock (a scrape
            // may run while a histogram is being made under it).
            return;
        }
        let now = std::time::Instant::now();
        let mut timeouts: Option<(String, Timeouts)> = None;
        self.end_histograms(|name, series| {
            if timeouts.as_ref().is_none_or(|(n, _)| n != name) {
                let otel = nemo_lens_core::__internal::bridge::otel_name(name);
                let otel = otel.as_deref().unwrap_or(name);
                timeouts = Some((name.to_owned(), self.timeouts(MetricKind::Histogram, otel)));
            }
            let timeout = timeouts
                .as_ref()
                .and_then(|(_, t)| t.of(&series.attributes));
            timeout.is_some_and(|timeout| series.recency().idle_for(now) > timeout)
        });
    }

    fn forget(&self, attribute: &KeyValue) {
        self.end_histograms(|_, series| series.attributes.contains(attribute));
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

    /// The bridge's own timeout for `kind`, else the registry's rules for
    /// the instrument `name`.
    fn timeouts(&self, kind: MetricKind, name: &str) -> Timeouts {
        let own = self
            .settings
            .idle_timeout
            .filter(|_| self.settings.idle_mask.matches(kind));
        let registry = self.meter.as_ref().and_then(Meter::registry);
        Timeouts::new(own, name, registry.map(|r| r.series_expiry()))
    }

    /// Ends the histogram series `ends` picks among those no handle of the
    /// application holds: their keys leave the look-up, their summaries
    /// the exposition, and their nemo-lens series every exporter.
    fn end_histograms(&self, mut ends: impl FnMut(&str, &HistogramSeries) -> bool) {
        let mut ended = Vec::new();
        {
            let mut families = self.lock_families();
            for (name, family) in families.iter_mut() {
                let Some((
                    _,
                    Instrument::Histogram {
                        histogram, series, ..
                    },
                )) = &mut family.exported
                else {
                    continue;
                };
                let mut gone = Vec::new();
                series.by_labels.retain(|_, entry| {
                    let unheld = Arc::strong_count(&entry.series) <= 1 + entry.keys.len();
                    if !unheld || !ends(name, &entry.series) || !self.unregister_all(entry) {
                        return true;
                    }
                    if let Some(summary) = &entry.series.summary {
                        self.exposed.summaries.remove(name, summary);
                    }
                    gone.push(entry.series.attributes.clone());
                    false
                });
                if !gone.is_empty() {
                    ended.push((histogram.clone(), gone));
                }
            }
        }
        // With the bridge's handles dropped, nothing holds the series.
        for (histogram, gone) in ended {
            for attributes in gone {
                histogram.remove(&attributes);
            }
        }
    }

    /// Takes every key of `entry` out of the look-up; `false`, with the
    /// keys back, when a reader still had one or a handle was taken
    /// meanwhile (its update then waits for the next collection).
    fn unregister_all(&self, entry: &Entry<HistogramSeries>) -> bool {
        for (removed, key) in entry.keys.iter().enumerate() {
            if self.unregister_histogram(key, &entry.series) == Removal::Busy {
                for key in &entry.keys[..removed] {
                    self.reregister_histogram(key, &entry.series);
                }
                return false;
            }
        }
        if Arc::strong_count(&entry.series) > 1 || entry.series.recency().touched_since_seen() {
            for key in &entry.keys {
                self.reregister_histogram(key, &entry.series);
            }
            return false;
        }
        true
    }

    fn unregister_histogram(&self, key: &SeriesKey, series: &Arc<HistogramSeries>) -> Removal {
        match key {
            SeriesKey::V024(key) => self.histograms.remove(key, series),
            #[cfg(feature = "metrics-023")]
            SeriesKey::V023(key) => self.histograms_023.remove(key, series),
        }
    }

    fn reregister_histogram(&self, key: &SeriesKey, series: &Arc<HistogramSeries>) {
        match key {
            SeriesKey::V024(key) => {
                self.histograms.insert(key.clone(), Arc::clone(series));
            }
            #[cfg(feature = "metrics-023")]
            SeriesKey::V023(key) => {
                self.histograms_023.insert(key.clone(), Arc::clone(series));
            }
        }
    }

    /// The family of `name` ready to take a series of `kind`, building its
    /// instrument on first use. Refused when nothing records, or (warned
    /// once) when the name has another kind or the SDK cannot take it: the
    /// caller warns once it has released the registration lock, since a
    /// subscriber may record through the facade.
    fn family<'f>(
        &self,
        families: &'f mut HashMap<String, Family>,
        name: &str,
        kind: Kind,
    ) -> Result<&'f mut Instrument, Option<Refusal>> {
        let meter = self.meter.as_ref().ok_or(None)?;
        let family = families.entry(name.to_owned()).or_default();
        match &family.exported {
            Some((existing, _)) if *existing != kind => {
                return Err(refuse(
                    &mut family.warned,
                    Refusal::OtherKind {
                        existing: *existing,
                        kind,
                    },
                ));
            }
            Some(_) => {}
            None => {
                let Some(otel_name) = nemo_lens_core::__internal::bridge::otel_name(name) else {
                    return Err(refuse(&mut family.warned, Refusal::Name));
                };
                let otel = otel_name.clone();
                let new = NewInstrument {
                    meter,
                    otel_name,
                    described: family.described.as_ref(),
                };
                let instrument = match kind {
                    Kind::Counter => new.counter(
                        self.timeouts(MetricKind::Counter, &otel),
                        self.expiry(Inner::unregister_counter, Inner::reregister_counter),
                    ),
                    Kind::Gauge => new.gauge(
                        self.timeouts(MetricKind::Gauge, &otel),
                        self.expiry(Inner::unregister_gauge, Inner::reregister_gauge),
                    ),
                    Kind::Histogram => self.new_histogram_instrument(name, new),
                };
                family.exported = Some((kind, instrument));
            }
        }
        match &mut family.exported {
            Some((_, instrument)) => Ok(instrument),
            None => Err(None),
        }
    }

    /// The instrument of histogram `name`: with its matcher's buckets,
    /// else exponential; summarised for Prometheus when opted in.
    fn new_histogram_instrument(&self, name: &str, new: NewInstrument<'_>) -> Instrument {
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
        if summarised {
            // Before the instrument exists: a scrape must never take the
            // name for a histogram, or its summary would be refused as a
            // second type for good.
            self.exposed.summaries.declare(name);
        }
        new.histogram(buckets, summarised)
    }

    /// What a collection calls with an idle series of an observable
    /// instrument that nobody holds: its keys leave the look-up, unless a
    /// handle to it was taken meanwhile or a look-up is still reading the
    /// old entry; then they go back and the series stays.
    fn expiry<T: Idles + Send + Sync + 'static>(
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
            // one. A handle taken and dropped since the collection found the
            // series idle left its update behind, unexported yet: the series
            // stays for the next collection to export it.
            if Arc::strong_count(&entry.series) > 1 || entry.series.recency().touched_since_seen() {
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
            #[cfg(feature = "metrics-023")]
            SeriesKey::V023(key) => self.counters_023.remove(key, series),
        }
    }

    fn reregister_counter(&self, key: &SeriesKey, series: &Arc<CounterSeries>) {
        match key {
            SeriesKey::V024(key) => {
                self.counters.insert(key.clone(), Arc::clone(series));
            }
            #[cfg(feature = "metrics-023")]
            SeriesKey::V023(key) => {
                self.counters_023.insert(key.clone(), Arc::clone(series));
            }
        }
    }

    fn unregister_gauge(&self, key: &SeriesKey, series: &Arc<GaugeSeries>) -> Removal {
        match key {
            SeriesKey::V024(key) => self.gauges.remove(key, series),
            #[cfg(feature = "metrics-023")]
            SeriesKey::V023(key) => self.gauges_023.remove(key, series),
        }
    }

    fn reregister_gauge(&self, key: &SeriesKey, series: &Arc<GaugeSeries>) {
        match key {
            SeriesKey::V024(key) => {
                self.gauges.insert(key.clone(), Arc::clone(series));
            }
            #[cfg(feature = "metrics-023")]
            SeriesKey::V023(key) => {
                self.gauges_023.insert(key.clone(), Arc::clone(series));
            }
        }
    }

    fn lock_families(&self) -> MutexGuard<'_, HashMap<String, Family>> {
        self.families.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The counter or gauge series of `key` in `registry` (the 0.24 or the
    /// 0.23 look-up): found without a lock, or registered on the key's first
    /// use. `None` when nothing records (the handle is then a no-op).
    #[inline]
    pub(crate) fn scalar<S: ScalarSeries, K: RegistryKey + Clone>(
        &self,
        registry: &Registry<K, S>,
        key: &K,
        parts: for<'k> fn(&'k K) -> KeyParts<'k>,
        series_key: fn(K) -> SeriesKey,
    ) -> Option<Arc<S>> {
        self.meter.as_ref()?;
        if let Some(series) = registry.get(key) {
            return Some(series);
        }
        self.new_scalar(parts(key), series_key(key.clone()), |_, s| {
            registry.insert(key.clone(), s)
        })
    }

    /// [`scalar`](Self::scalar) for histograms.
    #[inline]
    pub(crate) fn histogram<K: RegistryKey + Clone>(
        &self,
        registry: &Registry<K, HistogramSeries>,
        key: &K,
        parts: for<'k> fn(&'k K) -> KeyParts<'k>,
        series_key: fn(K) -> SeriesKey,
    ) -> Option<Arc<HistogramSeries>> {
        self.meter.as_ref()?;
        if let Some(series) = registry.get(key) {
            return Some(series);
        }
        self.new_histogram(parts(key), series_key(key.clone()), |_, s| {
            registry.insert(key.clone(), s)
        })
    }

    /// A key's first counter or gauge registration: its series, found by
    /// its labels or built, and made findable by `insert` (which returns the
    /// key's series and whether it was newly registered).
    pub(crate) fn new_scalar<S: ScalarSeries>(
        &self,
        parts: KeyParts<'_>,
        key: SeriesKey,
        insert: impl FnOnce(&Self, Arc<S>) -> (Arc<S>, bool),
    ) -> Option<Arc<S>> {
        let name = sanitize_metric_name(parts.name);
        let mut families = self.lock_families();
        let found = self.family(&mut families, &name, S::KIND);
        let observed = match found {
            Ok(instrument) => S::observed(instrument).map(Arc::clone).ok_or(None),
            Err(refusal) => Err(refusal),
        };
        let observed = match observed {
            Ok(observed) => observed,
            Err(refusal) => {
                return self.refused(refusal, families, &name, || S::make(Vec::new()), insert);
            }
        };
        Some(register_observed(
            &observed,
            self.labels(&parts.labels),
            key,
            S::make,
            |series| insert(self, series),
        ))
    }

    /// [`new_scalar`](Self::new_scalar) for histograms: each label set is
    /// built once, so keys reducing to one share it (and its summary);
    /// past the cardinality limit, keys reach the overflow series without
    /// being registered.
    pub(crate) fn new_histogram(
        &self,
        parts: KeyParts<'_>,
        key: SeriesKey,
        insert: impl FnOnce(&Self, Arc<HistogramSeries>) -> (Arc<HistogramSeries>, bool),
    ) -> Option<Arc<HistogramSeries>> {
        let name = sanitize_metric_name(parts.name);
        let mut families = self.lock_families();
        let (histogram, summarised, series) =
            match self.family(&mut families, &name, Kind::Histogram) {
                Ok(Instrument::Histogram {
                    histogram,
                    summarised,
                    series,
                }) => (histogram, *summarised, series),
                refused => {
                    let refusal = refused.err().flatten();
                    return self.refused(
                        refusal,
                        families,
                        &name,
                        HistogramSeries::unexported,
                        insert,
                    );
                }
            };
        let labels = self.labels(&parts.labels);
        if let Some(existing) = series.by_labels.get_mut(&labels) {
            let (registered, inserted) = insert(self, Arc::clone(&existing.series));
            if inserted {
                existing.keys.push(key);
            }
            return Some(registered);
        }
        let summaries = &self.exposed.summaries;
        if series.by_labels.len() >= cardinality_limit() {
            let overflow = series.overflow.get_or_insert_with(|| {
                let summary = summarised.then(|| {
                    let summary = summaries.new_series(vec![(
                        sanitize_label_key(
                            nemo_lens_core::__internal::overflow::OVERFLOW_ATTRIBUTE,
                        ),
                        "true".to_owned(),
                    )]);
                    summaries.add(&name, Arc::clone(&summary));
                    summary
                });
                Arc::new(HistogramSeries::new(
                    histogram.bind(&overflow_attributes()),
                    summary,
                    overflow_attributes(),
                ))
            });
            return Some(Arc::clone(overflow));
        }
        let summary = summarised.then(|| summaries.new_series(labels.clone()));
        let new = Arc::new(HistogramSeries::new(
            histogram.bind(&attributes(&labels)),
            summary.clone(),
            attributes(&labels),
        ));
        let (registered, inserted) = insert(self, Arc::clone(&new));
        // Only the registered series is summarised: a second summary of
        // one label set would be a duplicate sample.
        if inserted {
            if let Some(summary) = summary {
                summaries.add(&name, summary);
            }
            series.by_labels.insert(
                labels,
                Entry {
                    series: new,
                    keys: vec![key],
                },
            );
        }
        Some(registered)
    }

    /// A key of a name [`family`](Self::family) refused: warned about
    /// (the first time) once the registration lock is released, since a
    /// subscriber may record through the facade, then registered as
    /// [`unexported`](Self::unexported).
    fn refused<T>(
        &self,
        refusal: Option<Refusal>,
        families: MutexGuard<'_, HashMap<String, Family>>,
        name: &str,
        make: impl FnOnce() -> T,
        insert: impl FnOnce(&Self, Arc<T>) -> (Arc<T>, bool),
    ) -> Option<Arc<T>> {
        drop(families);
        if let Some(refusal) = refusal {
            refusal.warn(name);
        }
        self.unexported(make, insert)
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
        // An empty description says nothing yet: a later one is still the
        // first to be heard.
        if !description.is_empty() {
            self.described.rcu(|known| {
                let mut known = HashSet::clone(known);
                known.insert(name.to_owned());
                known
            });
        }
        let name = sanitize_metric_name(name);
        self.exposed.describe(&name, description);
        let mut families = self.lock_families();
        let family = families.entry(name).or_default();
        match &mut family.described {
            None => {
                family.described = Some(Described {
                    unit,
                    description: description.to_owned(),
                })
            }
            Some(described) if described.description.is_empty() => {
                described.description = description.to_owned();
                described.unit = described.unit.or(unit);
            }
            Some(_) => {}
        }
    }
}

/// Why a name takes no series of a kind.
#[derive(Debug, Clone, Copy)]
enum Refusal {
    /// The name is exported as another kind.
    OtherKind { existing: Kind, kind: Kind },
    /// The SDK cannot take the name.
    Name,
}

/// `refusal` to be warned about, the first time only.
fn refuse(warned: &mut bool, refusal: Refusal) -> Option<Refusal> {
    (!std::mem::replace(warned, true)).then_some(refusal)
}

impl Refusal {
    fn warn(self, name: &str) {
        use nemo_lens_core::__internal::warnings::{emit, Warning};
        emit(Warning::NameConflict, || match self {
            Refusal::OtherKind { existing, kind } => tracing::warn!(
                target: "nemo_lens",
                metric = name,
                "metric `{name}` is recorded as a {} and as a {}; only the {} is exported (one \
                 metric family per name), the {} records are dropped",
                existing.as_str(),
                kind.as_str(),
                existing.as_str(),
                kind.as_str(),
            ),
            Refusal::Name => tracing::warn!(
                target: "nemo_lens",
                metric = name,
                "metric `{name}` cannot be an OpenTelemetry instrument name (it is empty or longer \
                 than 255 characters); it is not exported"
            ),
        });
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

/// What counters and gauges differ in on the registration path: their
/// kind, how a series is made, and where their family keeps its series.
pub(crate) trait ScalarSeries: Sized {
    const KIND: Kind;
    fn make(attributes: Vec<KeyValue>) -> Self;
    fn observed(instrument: &Instrument) -> Option<&Arc<Observed<Self>>>;
}

impl ScalarSeries for CounterSeries {
    const KIND: Kind = Kind::Counter;

    fn make(attributes: Vec<KeyValue>) -> Self {
        CounterSeries::new(attributes)
    }

    fn observed(instrument: &Instrument) -> Option<&Arc<Observed<Self>>> {
        match instrument {
            Instrument::Counter { observed, .. } => Some(observed),
            _ => None,
        }
    }
}

impl ScalarSeries for GaugeSeries {
    const KIND: Kind = Kind::Gauge;

    fn make(attributes: Vec<KeyValue>) -> Self {
        GaugeSeries::new(attributes)
    }

    fn observed(instrument: &Instrument) -> Option<&Arc<Observed<Self>>> {
        match instrument {
            Instrument::Gauge { observed, .. } => Some(observed),
            _ => None,
        }
    }
}

/// The attributes of the series past the cardinality limit: the SDK's
/// overflow marker alone, as on its own overflow series.
fn overflow_attributes() -> Vec<KeyValue> {
    vec![KeyValue::new(
        nemo_lens_core::__internal::overflow::OVERFLOW_ATTRIBUTE,
        true,
    )]
}

/// 0.24's units are the bridge's own.
fn same_unit(unit: Option<Unit>) -> Option<Unit> {
    unit
}

recorder_for!(
    metrics,
    registries: (counters, gauges, histograms),
    series_key: SeriesKey::V024,
    unit: same_unit,
);

#[cfg(test)]
mod tests;
