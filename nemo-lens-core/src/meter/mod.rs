//! The meter handle that carries its own instrument cache.

mod lease;

use std::fmt;
use std::sync::{Arc, Weak};

use crate::cache::SetCache;
use crate::groups::GroupCache;
use std::borrow::Cow;

use crate::observe::{ObservedSlot, Registrations};
use crate::owned::expiry::Forgotten;
use crate::owned::handle::OwnedContext;
use crate::owned::{
    CounterOf, GaugeOf, HistogramBuilder, Registry, ScalarBuilder, UpDownCounterOf,
};
use crate::slo::Objectives;
use crate::{Instruments, SemconvOptIn};
use opentelemetry::KeyValue;

use lease::Leases;
pub use lease::MeterLease;

/// A cheap-to-clone handle over an OpenTelemetry meter and the instrument
/// sets built on it.
///
/// Every clone shares one cache. When the last clone is dropped the cached
/// sets are dropped with it, so re-initialising telemetry does not grow
/// memory.
///
/// A meter also carries the semantic-convention opt-in its sets follow
/// ([`SemconvOptIn`]): none for [`Meter::new`], the configured
/// `OTEL_SEMCONV_STABILITY_OPT_IN` for the meter `setup_telemetry` returns,
/// or your choice with [`with_semconv_opt_in`](Meter::with_semconv_opt_in).
///
/// ```
/// use nemo_lens::opentelemetry::metrics::MeterProvider as _;
/// use nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider;
/// use nemo_lens::Meter;
///
/// let provider = SdkMeterProvider::builder().build();
/// let meter = Meter::from(provider.meter("nemo.lens"));
/// // Hand-made instruments go through the inner meter.
/// let queue = meter.otel().u64_gauge("app.queue.depth").build();
/// queue.record(3, &[]);
/// ```
#[derive(Clone)]
pub struct Meter {
    inner: Arc<Inner>,
    /// `None` on the handles the leases hold themselves (which would
    /// otherwise keep their own table alive) and on upgraded weak handles
    /// whose table is gone.
    leases: Option<Arc<Leases>>,
}

struct Inner {
    otel: opentelemetry::metrics::Meter,
    enabled: bool,
    semconv: SemconvOptIn,
    /// The latency objectives requests recorded through it are judged
    /// against; `None` (the default) judges nothing.
    objectives: Option<Arc<Objectives>>,
    sets: SetCache,
    groups: GroupCache,
    owned: Option<OwnedContext>,
    observations: Arc<Registrations>,
}

impl Meter {
    /// Wraps an OpenTelemetry meter with an empty cache and no
    /// semantic-convention opt-in.
    pub fn new(meter: opentelemetry::metrics::Meter) -> Self {
        Self::with_state(meter, true, SemconvOptIn::none(), None, None)
    }

    /// A meter whose explicit-bucket histograms record into cells of
    /// `owned`'s registry, which the exporters of its provider read.
    pub(crate) fn with_owned(
        meter: opentelemetry::metrics::Meter,
        semconv: SemconvOptIn,
        owned: OwnedContext,
    ) -> Self {
        Self::with_state(meter, true, semconv, None, Some(owned))
    }

    /// A meter that records nothing, at the cost of one branch per `record`.
    pub fn noop() -> Self {
        let provider = opentelemetry::metrics::noop::NoopMeterProvider::new();
        let meter = opentelemetry::metrics::MeterProvider::meter(&provider, "nemo.lens");
        Self::with_state(meter, false, SemconvOptIn::none(), None, None)
    }

    fn with_state(
        otel: opentelemetry::metrics::Meter,
        enabled: bool,
        semconv: SemconvOptIn,
        objectives: Option<Arc<Objectives>>,
        owned: Option<OwnedContext>,
    ) -> Self {
        Meter {
            inner: Arc::new(Inner {
                otel,
                enabled,
                semconv,
                objectives,
                sets: SetCache::new(),
                groups: GroupCache::default(),
                owned,
                observations: Arc::default(),
            }),
            leases: Some(Arc::new(Leases::new())),
        }
    }

    /// The slot of the observed set `T` on this meter, its instruments
    /// built with `build` the first time; for `T::observe`.
    #[doc(hidden)]
    pub fn observed_slot<T: Send + 'static>(
        &self,
        build: impl FnOnce(&Arc<ObservedSlot<T>>),
    ) -> Arc<ObservedSlot<T>> {
        self.inner.observations.slot::<T>(build)
    }

    /// A handle for something that records later, such as a guard: it keeps
    /// the meter alive like a clone, but counts its holders on a handle of
    /// the current thread's own, so requests starting on every core do not
    /// pass one reference count between them.
    #[doc(hidden)]
    #[inline]
    pub fn lease(&self) -> MeterLease {
        match &self.leases {
            Some(leases) => leases.lease(self),
            None => MeterLease::unshared(self),
        }
    }

    /// The same OpenTelemetry meter following `opt_in`
    /// (`OTEL_SEMCONV_STABILITY_OPT_IN` chosen in code), with a cache of its
    /// own: sets already built on `self` keep the names they were built with.
    ///
    /// ```
    /// use nemo_lens::opentelemetry::metrics::MeterProvider as _;
    /// use nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider;
    /// use nemo_lens::{Meter, SemconvOptIn};
    ///
    /// let provider = SdkMeterProvider::builder().build();
    /// let meter = Meter::new(provider.meter("nemo.lens"))
    ///     .with_semconv_opt_in(SemconvOptIn::parse("gen_ai_latest_experimental"));
    /// assert!(meter.semconv_opt_in().records_new("gen_ai_latest_experimental"));
    /// ```
    #[must_use]
    pub fn with_semconv_opt_in(&self, opt_in: SemconvOptIn) -> Self {
        Self::with_state(
            self.inner.otel.clone(),
            self.inner.enabled,
            opt_in,
            self.inner.objectives.clone(),
            self.inner.owned.clone(),
        )
    }

    /// The same OpenTelemetry meter judging the requests recorded through it
    /// against `objectives` (what `NEMO_LENS_SLO` sets on the meter
    /// `setup_telemetry` returns), with a cache of its own. Empty
    /// objectives judge nothing.
    ///
    /// ```
    /// use nemo_lens::slo::{Objectives, Slo};
    /// use nemo_lens::Meter;
    ///
    /// let slo: Slo = "time_to_first_token:300".parse().unwrap();
    /// let meter = Meter::noop().with_objectives(Objectives::new(slo));
    /// assert!(meter.objectives().is_some());
    /// ```
    #[must_use]
    pub fn with_objectives(&self, objectives: Objectives) -> Self {
        Self::with_state(
            self.inner.otel.clone(),
            self.inner.enabled,
            self.inner.semconv.clone(),
            (!objectives.is_empty()).then(|| Arc::new(objectives)),
            self.inner.owned.clone(),
        )
    }

    /// The latency objectives requests are judged against, if any.
    #[inline]
    pub fn objectives(&self) -> Option<&Objectives> {
        self.inner.objectives.as_deref()
    }

    /// A meter on `otel` (of `scope`, from the same provider) whose owned
    /// series go to this meter's registry; for the metrics bridge.
    pub(crate) fn with_scope(
        &self,
        otel: opentelemetry::metrics::Meter,
        scope: opentelemetry::InstrumentationScope,
    ) -> Self {
        let owned = self.inner.owned.as_ref().map(|owned| OwnedContext {
            registry: Arc::clone(&owned.registry),
            scope,
            streams: Arc::clone(&owned.streams),
        });
        Self::with_state(otel, self.inner.enabled, SemconvOptIn::none(), None, owned)
    }

    /// The semantic-convention opt-in this meter's sets follow.
    #[inline]
    pub fn semconv_opt_in(&self) -> &SemconvOptIn {
        &self.inner.semconv
    }

    /// The OpenTelemetry meter, for instruments this crate does not declare.
    pub fn otel(&self) -> &opentelemetry::metrics::Meter {
        &self.inner.otel
    }

    /// A histogram of `u64` values: its series live in nemo-lens's
    /// [`cells`](crate::cells) when this meter came from `setup_telemetry`
    /// (or a test capture) and the histogram aggregates in explicit
    /// buckets, so that one series scales across threads; otherwise it is
    /// the SDK's, as `otel().u64_histogram(name)` builds it.
    pub fn u64_histogram(&self, name: impl Into<Cow<'static, str>>) -> HistogramBuilder<'_, u64> {
        HistogramBuilder::new(self, name.into())
    }

    /// A histogram of `f64` values; see [`u64_histogram`](Self::u64_histogram).
    pub fn f64_histogram(&self, name: impl Into<Cow<'static, str>>) -> HistogramBuilder<'_, f64> {
        HistogramBuilder::new(self, name.into())
    }

    /// A counter of `u64` increments; like
    /// [`u64_histogram`](Self::u64_histogram), its series are nemo-lens's
    /// own cells on a meter from `setup_telemetry`, the SDK's otherwise.
    pub fn u64_counter(
        &self,
        name: impl Into<Cow<'static, str>>,
    ) -> ScalarBuilder<'_, CounterOf<u64>> {
        ScalarBuilder::new(self, name.into())
    }

    /// A counter of `f64` increments; see [`u64_counter`](Self::u64_counter).
    pub fn f64_counter(
        &self,
        name: impl Into<Cow<'static, str>>,
    ) -> ScalarBuilder<'_, CounterOf<f64>> {
        ScalarBuilder::new(self, name.into())
    }

    /// An up-down counter of `i64` changes; see [`u64_counter`](Self::u64_counter).
    pub fn i64_up_down_counter(
        &self,
        name: impl Into<Cow<'static, str>>,
    ) -> ScalarBuilder<'_, UpDownCounterOf<i64>> {
        ScalarBuilder::new(self, name.into())
    }

    /// An up-down counter of `f64` changes; see [`u64_counter`](Self::u64_counter).
    pub fn f64_up_down_counter(
        &self,
        name: impl Into<Cow<'static, str>>,
    ) -> ScalarBuilder<'_, UpDownCounterOf<f64>> {
        ScalarBuilder::new(self, name.into())
    }

    /// A gauge of `u64` values; see [`u64_counter`](Self::u64_counter).
    pub fn u64_gauge(&self, name: impl Into<Cow<'static, str>>) -> ScalarBuilder<'_, GaugeOf<u64>> {
        ScalarBuilder::new(self, name.into())
    }

    /// A gauge of `i64` values; see [`u64_counter`](Self::u64_counter).
    pub fn i64_gauge(&self, name: impl Into<Cow<'static, str>>) -> ScalarBuilder<'_, GaugeOf<i64>> {
        ScalarBuilder::new(self, name.into())
    }

    /// A gauge of `f64` values; see [`u64_counter`](Self::u64_counter).
    pub fn f64_gauge(&self, name: impl Into<Cow<'static, str>>) -> ScalarBuilder<'_, GaugeOf<f64>> {
        ScalarBuilder::new(self, name.into())
    }

    pub(crate) fn owned(&self) -> Option<&OwnedContext> {
        self.inner.owned.as_ref()
    }

    /// The registry of owned series this meter records into, read by its
    /// provider's exporters; `None` for a meter around an OpenTelemetry
    /// meter of your own.
    pub fn registry(&self) -> Option<&std::sync::Arc<Registry>> {
        self.inner.owned.as_ref().map(|owned| &owned.registry)
    }

    /// Ends, at once, every series of this meter's instruments whose
    /// attributes carry `attribute`: when a model is unloaded or a backend
    /// leaves, its series leave every exporter from the next collection and
    /// free their memory, and the same attributes recorded later start new
    /// series (a new start time on OTLP).
    ///
    /// Series end by themselves, too, once idle for
    /// `NEMO_LENS_SERIES_IDLE_TIMEOUT`
    /// ([`SetupOptions::series_idle_timeout`](https://docs.rs/nemo-lens/latest/nemo_lens/telemetry/struct.SetupOptions.html#method.series_idle_timeout)).
    /// Which series can end, by either way:
    ///
    /// - every series of a counter, histogram or gauge this meter owns
    ///   (derived and built-in sets, guards, the OpenAI layer, runtime
    ///   groups, the metrics bridge), as soon as nothing records into it;
    /// - an up-down counter's series only at zero: requests in flight or
    ///   sandboxes held never vanish while held (forgetting one away from
    ///   zero ends it all the same);
    /// - never a series `start_at_zero` made, while the set lives;
    /// - never a series that no attribute value reaches: those of a set
    ///   without `#[attribute]` fields, and those of an instrument whose
    ///   fields the `only(..)` of every attribute leaves out (one per field
    ///   and instrument, held by the set: they cannot pile up);
    /// - never a series a bound handle you keep (`bind`, or a `metrics`
    ///   handle you store) holds: it ends after you drop the handle. Such
    ///   series are counted in [`Forgotten::held`](crate::owned::expiry::Forgotten::held).
    ///   The handles sets cache for their attribute values are let go of
    ///   here and at each sweep, so they hold nothing back.
    ///
    /// Series of an observed set (`#[instruments(observe)]`) end when its
    /// source stops returning them; a meter without owned series (around an
    /// OpenTelemetry meter of your own) forgets nothing.
    ///
    /// ```
    /// use nemo_lens::testing::Capture;
    /// use nemo_lens::opentelemetry::KeyValue;
    /// use nemo_lens::Instruments;
    ///
    /// /// What a router sends to one backend.
    /// #[derive(Instruments, Default)]
    /// struct Upstream {
    ///     /// Requests sent.
    ///     #[counter("router.upstream.requests", unit = "{request}")]
    ///     requests: Option<u64>,
    ///     /// The backend's address.
    ///     #[attribute("server.address")]
    ///     backend: Option<String>,
    /// }
    ///
    /// let capture = Capture::new();
    /// let meter = capture.meter();
    /// for backend in ["10.0.0.7:8000", "10.0.0.8:8000"] {
    ///     Upstream::default().requests(1).backend(backend.to_owned()).record(meter);
    /// }
    /// // The pod at 10.0.0.7 was deleted.
    /// let gone = meter.forget(&KeyValue::new("server.address", "10.0.0.7:8000"));
    /// assert_eq!(gone.series, 1);
    /// let requests = "router.upstream.requests";
    /// assert_eq!(capture.sum(requests, &[("server.address", "10.0.0.7:8000")]), None);
    /// assert_eq!(capture.sum(requests, &[("server.address", "10.0.0.8:8000")]), Some(1.0));
    /// ```
    pub fn forget(&self, attribute: &KeyValue) -> Forgotten {
        match &self.inner.owned {
            Some(owned) => owned.registry.forget(Some(&owned.scope), attribute),
            None => Forgotten::default(),
        }
    }

    /// Whether recording through this handle reaches an exporter.
    pub fn is_enabled(&self) -> bool {
        self.inner.enabled
    }

    /// The instrument set of `T` on this meter, built on first use; `None`
    /// for a [`noop`](Meter::noop) meter.
    #[inline]
    pub fn instruments<T: Instruments + ?Sized>(&self) -> Option<&T::Set> {
        if !self.inner.enabled {
            return None;
        }
        self.inner
            .sets
            .get_or_build(T::slot(), || T::build_set(self))
    }

    /// How many instrument sets this meter has built.
    pub fn cached_sets(&self) -> usize {
        self.inner.sets.len()
    }

    /// How many runtime metric groups this meter has built instruments for.
    pub fn cached_groups(&self) -> usize {
        self.inner.groups.len()
    }

    pub(crate) fn group_cache(&self) -> &GroupCache {
        &self.inner.groups
    }

    /// A handle that does not keep the meter or its sets alive.
    pub fn downgrade(&self) -> WeakMeter {
        WeakMeter(
            Arc::downgrade(&self.inner),
            self.leases.as_ref().map(Arc::downgrade),
        )
    }

    /// Whether two handles share one cache.
    pub fn same_cache(&self, other: &Meter) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl From<opentelemetry::metrics::Meter> for Meter {
    fn from(meter: opentelemetry::metrics::Meter) -> Self {
        Meter::new(meter)
    }
}

impl fmt::Debug for Meter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meter")
            .field("enabled", &self.inner.enabled)
            .field("semconv_opt_in", &self.inner.semconv)
            .field("cached_sets", &self.cached_sets())
            .finish()
    }
}

/// A non-owning [`Meter`] handle; see [`Meter::downgrade`].
#[derive(Clone, Debug)]
pub struct WeakMeter(Weak<Inner>, Option<Weak<Leases>>);

impl WeakMeter {
    /// The meter, if any handle to it is still alive.
    pub fn upgrade(&self) -> Option<Meter> {
        let inner = self.0.upgrade()?;
        // Every strong handle gone but a lease: a table of its own, so that
        // guards started on it still count per thread.
        let leases = self
            .1
            .as_ref()
            .and_then(Weak::upgrade)
            .unwrap_or_else(|| Arc::new(Leases::new()));
        Some(Meter {
            inner,
            leases: Some(leases),
        })
    }
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meter").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Barrier;

    use super::*;
    use crate::{Descriptor, SetSlot};

    static BUILDS: AtomicUsize = AtomicUsize::new(0);
    static DROPS: AtomicUsize = AtomicUsize::new(0);

    /// A hand-written set whose builds and drops are counted.
    struct Probe;

    struct ProbeSet;

    impl Drop for ProbeSet {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl Instruments for Probe {
        type Set = ProbeSet;
        const DESCRIPTORS: &'static [Descriptor] = &[];
        fn build_set(_: &Meter) -> ProbeSet {
            BUILDS.fetch_add(1, Ordering::SeqCst);
            // Widen the race window so concurrent first uses overlap.
            std::thread::sleep(std::time::Duration::from_millis(20));
            ProbeSet
        }
        fn slot() -> &'static SetSlot {
            static SLOT: SetSlot = SetSlot::new();
            &SLOT
        }
        fn record_with(&self, _: &ProbeSet) {}
    }

    fn otel_meter() -> opentelemetry::metrics::Meter {
        let provider = opentelemetry::metrics::noop::NoopMeterProvider::new();
        opentelemetry::metrics::MeterProvider::meter(&provider, "test")
    }

    #[test]
    fn concurrent_first_use_builds_once_and_the_last_drop_frees_the_set() {
        let meter = Meter::new(otel_meter());
        let weak = meter.downgrade();
        let barrier = Barrier::new(8);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                let meter = meter.clone();
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    Probe.record(&meter);
                    assert!(meter.instruments::<Probe>().is_some());
                });
            }
        });
        assert_eq!(BUILDS.load(Ordering::SeqCst), 1);
        assert_eq!(DROPS.load(Ordering::SeqCst), 0);
        let clone = meter.clone();
        drop(meter);
        assert_eq!(
            DROPS.load(Ordering::SeqCst),
            0,
            "a clone still holds the cache"
        );
        drop(clone);
        assert_eq!(
            DROPS.load(Ordering::SeqCst),
            1,
            "the last drop frees the set"
        );
        assert!(weak.upgrade().is_none());
    }
}
