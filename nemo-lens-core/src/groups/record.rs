//! Recording a group by key on a meter: its instruments are built the first
//! time a meter records (or creates) the group and cached on that meter, so
//! they go when the meter goes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use opentelemetry::metrics::AsyncInstrument;
use opentelemetry::{Key, KeyValue};

use super::registry::{lookup, Group};
use super::spec::{MetricKind, MetricSpec};
use super::warn::{first, first_of, Trouble};
use crate::owned::{Counter, Gauge, Histogram, UpDownCounter};
use crate::Meter;

/// One built instrument of a group.
enum Built {
    Gauge(Gauge<f64>),
    Histogram(Histogram<f64>),
    Counter(Counter<f64>),
    UpDownCounter(UpDownCounter<f64>),
    /// The SDK keeps the callback registered; the handle is kept so the
    /// instrument lives exactly as long as the cache entry.
    Observable(#[allow(dead_code)] Box<dyn std::any::Any + Send + Sync>),
}

/// A group's instruments on one meter.
pub(crate) struct GroupInstruments {
    group: Arc<Group>,
    built: Vec<Built>,
    /// Per spec, what its measurements carry. Shared with an observable
    /// spec's callback, which the SDK may keep after the cache drops it.
    attributes: Vec<Arc<SpecAttributes>>,
    /// Per spec, the [`Trouble`]s already warned about (one bit each), so a
    /// value that keeps being bad costs an atomic load, not the process-wide
    /// warning set's lock.
    warned: Vec<AtomicU8>,
}

/// A group's slot on one meter: the definition it was made for, and its
/// instruments, built once outside the cache's lock (building takes the
/// SDK's pipeline lock, which a collection holds while it runs observable
/// callbacks that may record other groups on this meter).
pub(crate) struct Slot {
    group: Arc<Group>,
    built: OnceLock<GroupInstruments>,
}

/// The groups a meter has built, by group name.
#[derive(Default)]
pub(crate) struct GroupCache(RwLock<HashMap<String, Arc<Slot>>>);

impl GroupCache {
    pub(crate) fn len(&self) -> usize {
        self.0.read().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// The instruments of `group` on `meter`, built on first use; `None` (after
/// one warning) for a group nobody registered.
fn instruments(meter: &Meter, group: &str) -> Option<Arc<Slot>> {
    let cache = meter.group_cache();
    let slot = {
        let cached = cache.0.read().unwrap_or_else(PoisonError::into_inner);
        cached
            .get(group)
            .filter(|slot| !slot.group.is_retired())
            .cloned()
    };
    if let Some(slot) = slot {
        slot.built.get_or_init(|| build(meter, &slot.group));
        return Some(slot);
    }
    let Some(entry) = lookup(group) else {
        // A retired definition's instruments go with it.
        let stale = cache
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(group);
        if stale {
            cache
                .0
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(group);
        }
        if first(Trouble::Unregistered, group, "") {
            crate::warnings::emit(crate::warnings::Warning::Group, || {
                tracing::warn!(
                    target: "nemo_lens",
                    group,
                    "metric group `{group}` is not registered; call register_metric_group first. \
                     Its values are dropped"
                );
            });
        }
        return None;
    };
    let slot = {
        let mut cached = cache.0.write().unwrap_or_else(PoisonError::into_inner);
        match cached.get(group) {
            // Another thread made the slot while this one waited.
            Some(slot) if Arc::ptr_eq(&slot.group, &entry) => Arc::clone(slot),
            _ => {
                let slot = Arc::new(Slot {
                    group: entry,
                    built: OnceLock::new(),
                });
                cached.insert(group.to_owned(), Arc::clone(&slot));
                slot
            }
        }
    };
    slot.built.get_or_init(|| build(meter, &slot.group));
    Some(slot)
}

fn build(meter: &Meter, group: &Arc<Group>) -> GroupInstruments {
    let attributes: Vec<Arc<SpecAttributes>> = group
        .specs
        .iter()
        .map(|spec| Arc::new(SpecAttributes::new(&group.name, spec)))
        .collect();
    let built = group
        .specs
        .iter()
        .zip(&attributes)
        .map(|(spec, attributes)| build_one(meter, spec, attributes))
        .collect();
    GroupInstruments {
        group: Arc::clone(group),
        warned: group.specs.iter().map(|_| AtomicU8::new(0)).collect(),
        built,
        attributes,
    }
}

fn build_one(meter: &Meter, spec: &MetricSpec, attributes: &Arc<SpecAttributes>) -> Built {
    let name = spec.name.clone();
    let unit = spec.unit.clone();
    let description = spec.description.clone();
    let callback = spec.callback.clone();
    let attributes = Arc::clone(attributes);
    // The callback's observations follow the spec's attributes as recorded
    // values do, or an observable spec could grow series it never declared.
    let observe = move |observer: &dyn AsyncInstrument<f64>| {
        if let Some(callback) = &callback {
            callback(&Declared {
                observer,
                attributes: &attributes,
            });
        }
    };
    if matches!(
        spec.kind,
        MetricKind::ObservableGauge
            | MetricKind::ObservableCounter
            | MetricKind::ObservableUpDownCounter
    ) && let Some(registry) = meter.registry()
    {
        registry.declare_observable(&name);
    }
    match spec.kind {
        MetricKind::Gauge => Built::Gauge(
            meter
                .f64_gauge(name)
                .with_unit(unit)
                .with_description(description)
                .build(),
        ),
        MetricKind::Histogram => {
            let mut builder = meter
                .f64_histogram(name)
                .with_unit(unit)
                .with_description(description);
            if let Some(bounds) = &spec.buckets {
                builder = builder.with_boundaries(bounds.clone());
            }
            Built::Histogram(builder.build())
        }
        MetricKind::Counter => Built::Counter(
            meter
                .f64_counter(name)
                .with_unit(unit)
                .with_description(description)
                .build(),
        ),
        MetricKind::UpDownCounter => Built::UpDownCounter(
            meter
                .f64_up_down_counter(name)
                .with_unit(unit)
                .with_description(description)
                .build(),
        ),
        MetricKind::ObservableGauge => Built::Observable(Box::new(
            meter
                .otel()
                .f64_observable_gauge(name)
                .with_unit(unit)
                .with_description(description)
                .with_callback(observe)
                .build(),
        )),
        MetricKind::ObservableCounter => Built::Observable(Box::new(
            meter
                .otel()
                .f64_observable_counter(name)
                .with_unit(unit)
                .with_description(description)
                .with_callback(observe)
                .build(),
        )),
        MetricKind::ObservableUpDownCounter => Built::Observable(Box::new(
            meter
                .otel()
                .f64_observable_up_down_counter(name)
                .with_unit(unit)
                .with_description(description)
                .with_callback(observe)
                .build(),
        )),
    }
}

/// Builds `group`'s instruments on `meter` without recording anything: what
/// an observable metric needs to start reporting. Calling it again does
/// nothing (callbacks are installed once per meter); an unregistered group
/// is one warning.
pub fn create_metric_instruments(meter: &Meter, group: &str) {
    if meter.is_enabled() {
        let _ = instruments(meter, group);
    }
}

/// Records `values` of `group` by key, each with its spec's static
/// attributes and those of `attributes` its spec declares. `None` values
/// are skipped. Never fails and never panics: an unregistered group, an
/// unknown key, a non-finite value, a negative count or a value for an
/// observable key is one `tracing` warning (target `nemo_lens`) per problem,
/// group and key for the life of the process, and that value is dropped.
///
/// An attribute its spec does not declare (every attribute, for a spec that
/// declares none) is left off, and the value is recorded without it, with
/// one warning per group, key and attribute: nothing recorded is lost, and
/// a metric has only the series its spec declares.
///
/// ```
/// use nemo_lens::groups::{record_metrics, register_metric_group, MetricKind, MetricSpec};
/// use nemo_lens::opentelemetry::KeyValue;
/// use nemo_lens::Meter;
///
/// register_metric_group(
///     "doc_gym",
///     [MetricSpec::new("episodes", "gym.episodes", MetricKind::Counter)
///         .unit("{episode}")
///         .description("Episodes finished.")
///         .attributes(["env"])],
/// )
/// .unwrap();
/// let meter = Meter::noop();
/// record_metrics(&meter, "doc_gym", [("episodes", 4.0)], &[KeyValue::new("env", "math")]);
/// ```
pub fn record_metrics<K, V>(
    meter: &Meter,
    group: &str,
    values: impl IntoIterator<Item = (K, V)>,
    attributes: &[KeyValue],
) where
    K: AsRef<str>,
    V: Into<Option<f64>>,
{
    if !meter.is_enabled() {
        return;
    }
    let mut values = values.into_iter().peekable();
    if values.peek().is_none() {
        return;
    }
    let Some(slot) = instruments(meter, group) else {
        return;
    };
    let Some(set) = slot.built.get() else {
        return;
    };
    for (key, value) in values {
        let Some(value) = value.into() else {
            continue;
        };
        set.record(key.as_ref(), value, attributes);
    }
}

impl GroupInstruments {
    /// Whether to warn about `trouble` for spec `index`: the first time on
    /// this meter, and then only if no other meter warned before.
    fn first_here(&self, index: usize, trouble: Trouble, detail: &str) -> bool {
        let bit = 1u8 << trouble as u8;
        if self.warned[index].fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            return false;
        }
        first(trouble, &self.group.name, detail)
    }

    fn record(&self, key: &str, value: f64, attributes: &[KeyValue]) {
        let group = self.group.name.as_str();
        let Some(index) = self.group.position(key) else {
            if first(Trouble::UnknownKey, group, key) {
                crate::warnings::emit(crate::warnings::Warning::Group, || {
                    tracing::warn!(
                        target: "nemo_lens",
                        group,
                        key,
                        "metric group `{group}` has no key `{key}`; its values are dropped"
                    );
                });
            }
            return;
        };
        let spec = &self.group.specs[index];
        if !value.is_finite() {
            if self.first_here(index, Trouble::BadValue, key) {
                crate::warnings::emit(crate::warnings::Warning::DroppedValue, || {
                    tracing::warn!(
                        target: "nemo_lens",
                        group,
                        key,
                        "`{key}` of metric group `{group}` got {value}; non-finite values are dropped"
                    );
                });
            }
            return;
        }
        // Only for a value that is recorded: a dropped one says why once,
        // not also which attributes it would have lost.
        let declared = || self.attributes[index].apply(attributes);
        match &self.built[index] {
            Built::Gauge(gauge) => gauge.record(value, &declared()),
            Built::Histogram(histogram) => histogram.record(value, &declared()),
            Built::UpDownCounter(sum) => sum.add(value, &declared()),
            Built::Counter(counter) if value >= 0.0 => counter.add(value, &declared()),
            Built::Counter(_) => {
                if self.first_here(index, Trouble::NegativeCount, key) {
                    crate::warnings::emit(crate::warnings::Warning::DroppedValue, || {
                        tracing::warn!(
                            target: "nemo_lens",
                            group,
                            key,
                            "`{key}` of metric group `{group}` is a counter and got {value}; \
                             counters only go up, negative values are dropped"
                        );
                    });
                }
            }
            Built::Observable(_) => {
                if self.first_here(index, Trouble::ObservableKey, key) {
                    crate::warnings::emit(crate::warnings::Warning::DroppedValue, || {
                        tracing::warn!(
                            target: "nemo_lens",
                            group,
                            key,
                            "`{key}` of metric group `{group}` is {} and reports through its \
                             callback; values passed to record_metrics are dropped",
                            spec.kind
                        );
                    });
                }
            }
        }
    }
}

/// What one spec's measurements carry: its static attributes, then the
/// given ones it declares.
struct SpecAttributes {
    group: String,
    key: String,
    observable: bool,
    declared: Vec<String>,
    statics: Vec<KeyValue>,
    /// The undeclared attributes already warned about on this meter, so one
    /// passed on every record costs a read lock, not the process-wide
    /// warning set's mutex.
    warned: RwLock<Vec<Key>>,
}

/// A caller inventing attribute keys (one per request, say) would otherwise
/// grow the warned list, and the log, without bound.
const MAX_WARNED_ATTRIBUTES: usize = 32;

impl SpecAttributes {
    fn new(group: &str, spec: &MetricSpec) -> Self {
        SpecAttributes {
            group: group.to_owned(),
            key: spec.key.clone(),
            observable: spec.kind.is_observable(),
            declared: spec.attributes.clone(),
            statics: spec
                .static_attributes
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                .collect(),
            warned: RwLock::new(Vec::new()),
        }
    }

    fn declares(&self, key: &Key) -> bool {
        self.declared.iter().any(|k| k.as_str() == key.as_str())
    }

    fn apply<'a>(&'a self, given: &'a [KeyValue]) -> Cow<'a, [KeyValue]> {
        if given.is_empty() {
            return Cow::Borrowed(&self.statics);
        }
        if self.statics.is_empty() && given.iter().all(|kv| self.declares(&kv.key)) {
            return Cow::Borrowed(given);
        }
        let mut all = self.statics.clone();
        for attribute in given {
            if self.declares(&attribute.key) {
                all.push(attribute.clone());
            } else {
                self.warn_undeclared(&attribute.key);
            }
        }
        Cow::Owned(all)
    }

    fn warn_undeclared(&self, attribute: &Key) {
        {
            let warned = self.warned.read().unwrap_or_else(PoisonError::into_inner);
            if warned.len() >= MAX_WARNED_ATTRIBUTES || warned.contains(attribute) {
                return;
            }
        }
        {
            let mut warned = self.warned.write().unwrap_or_else(PoisonError::into_inner);
            // Another thread may have warned while this one waited.
            if warned.len() >= MAX_WARNED_ATTRIBUTES || warned.contains(attribute) {
                return;
            }
            warned.push(attribute.clone());
        }
        let (group, key) = (self.group.as_str(), self.key.as_str());
        if !first_of(Trouble::UndeclaredAttribute, group, key, attribute.as_str()) {
            return;
        }
        let declares = if self.declared.is_empty() {
            "none".to_owned()
        } else {
            self.declared.join(", ")
        };
        let verb = if self.observable {
            "observed"
        } else {
            "recorded"
        };
        crate::warnings::emit(crate::warnings::Warning::Group, || {
            tracing::warn!(
                target: "nemo_lens",
                group,
                key,
                attribute = attribute.as_str(),
                "metric group `{group}`: `{key}` was {verb} with attribute `{attribute}`, which its \
                 spec does not declare (it declares {declares}); the attribute is left off and the \
                 value {verb} without it"
            );
        });
    }
}

/// The observer an observable spec's callback sees: the SDK's, with the
/// spec's attributes applied.
struct Declared<'a> {
    observer: &'a dyn AsyncInstrument<f64>,
    attributes: &'a SpecAttributes,
}

impl AsyncInstrument<f64> for Declared<'_> {
    fn observe(&self, measurement: f64, attributes: &[KeyValue]) {
        self.observer
            .observe(measurement, &self.attributes.apply(attributes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groups::register_metric_group;
    use opentelemetry::metrics::MeterProvider as _;

    #[test]
    fn each_meter_caches_its_own_instruments_and_frees_them_with_it() {
        register_metric_group(
            "cache_probe",
            [MetricSpec::new("a", "cache_probe.a", MetricKind::Gauge).description("A probe.")],
        )
        .unwrap();
        let provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder().build();
        let group = lookup("cache_probe").unwrap();
        let baseline = Arc::strong_count(&group);
        let first = Meter::new(provider.meter("a"));
        let second = Meter::new(provider.meter("b"));
        for _ in 0..3 {
            record_metrics(&first, "cache_probe", [("a", 1.0)], &[]);
            record_metrics(&second, "cache_probe", [("a", 1.0)], &[]);
        }
        // One slot and one build per meter (each holding the definition),
        // however many records.
        assert_eq!(Arc::strong_count(&group), baseline + 4);
        assert_eq!(first.cached_groups(), 1);
        let clone = first.clone();
        drop(first);
        assert_eq!(Arc::strong_count(&group), baseline + 4, "a clone keeps it");
        drop(clone);
        assert_eq!(Arc::strong_count(&group), baseline + 2);
        drop(second);
        assert_eq!(Arc::strong_count(&group), baseline);
    }
}
