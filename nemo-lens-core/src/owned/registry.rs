//! The owned instruments of one meter provider, found by scope and name.

use crate::exemplar::ExemplarFilter;
use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use std::time::{Duration, SystemTime};

use opentelemetry::{InstrumentationScope, KeyValue};

use super::collected::{OwnedMetric, OwnedScope};
use super::expiry::{Clock, Expiry, Forgotten, Holder, SeriesExpiry};
use super::gathered::{Gather, GatheredScope, Gathering};

/// What the registry asks of every owned instrument at a collection.
pub(crate) trait Collect: Send + Sync + 'static {
    fn scope(&self) -> &InstrumentationScope;
    /// Its name.
    fn name(&self) -> &str;
    /// Every series now; with `reset_extremes`, minimum and maximum start
    /// over (a delta reader's interval).
    fn collect(&self, reset_extremes: bool) -> Option<OwnedMetric>;
    /// Ends its series idle for the timeout.
    fn sweep(&self);
    /// Ends its series that carry `attribute` and nobody holds.
    fn forget(&self, attribute: &KeyValue) -> Forgotten;
    /// How many series it has.
    fn len(&self) -> usize;
    /// When each of its series started, for exporters that read it
    /// through the SDK (whose start time is the instrument's).
    fn starts(&self, _each: &mut dyn FnMut(&[KeyValue], SystemTime)) {}
}

type Key = (String, Option<String>, String);

/// When series started, by scope name and version, instrument name (lower
/// case) and attributes (sorted by key).
pub type Starts = HashMap<Key, HashMap<Vec<KeyValue>, SystemTime>>;

/// The owned instruments of one meter provider. One instrument per scope and
/// name (compared without case, as the SDK does): building it again returns
/// the same series.
pub struct Registry {
    start: SystemTime,
    expiry: Expiry,
    exemplar_filter: ExemplarFilter,
    instruments: Mutex<Instruments>,
    gathering: Mutex<Gathering>,
    /// Names of the observable instruments built on a meter of this
    /// registry, which the SDK holds.
    observables: Mutex<Vec<String>>,
}

#[derive(Default)]
struct Instruments {
    /// By scope (name, version and attributes, as the SDK tells scopes
    /// apart: two bridges of one provider differ by an attribute) and name
    /// in lower case.
    by_key: HashMap<(InstrumentationScope, String), Arc<dyn Any + Send + Sync>>,
    in_order: Vec<Arc<dyn Collect>>,
}

impl Registry {
    /// An empty registry; cumulative series start now.
    pub fn new() -> Arc<Self> {
        Self::with_expiry(Expiry::never())
    }

    /// An empty registry whose series end once idle for `timeout` (never
    /// when it is zero), timed by `clock` (the system's monotonic clock
    /// when `None`).
    pub fn with_idle_timeout(timeout: Duration, clock: Option<Arc<dyn Clock>>) -> Arc<Self> {
        Self::with_expiry(Expiry::new(SeriesExpiry::after(timeout), clock))
    }

    /// An empty registry whose series end as `expiry` says, timed by
    /// `clock` (the system's monotonic clock when `None`).
    pub fn with_series_expiry(expiry: SeriesExpiry, clock: Option<Arc<dyn Clock>>) -> Arc<Self> {
        Self::with_expiry(Expiry::new(expiry, clock))
    }

    pub(crate) fn with_expiry(expiry: Expiry) -> Arc<Self> {
        Self::with_settings(expiry, ExemplarFilter::default())
    }

    /// An empty registry whose histograms keep the exemplars `filter` keeps
    /// (trace-based in the other constructors).
    pub fn with_exemplar_filter(filter: ExemplarFilter) -> Arc<Self> {
        Self::with_settings(Expiry::never(), filter)
    }

    pub(crate) fn with_settings(expiry: Expiry, exemplar_filter: ExemplarFilter) -> Arc<Self> {
        Arc::new(Registry {
            start: SystemTime::now(),
            expiry,
            exemplar_filter,
            instruments: Mutex::default(),
            gathering: Mutex::default(),
            observables: Mutex::default(),
        })
    }

    /// How long a series that no rule of its
    /// [`series_expiry`](Self::series_expiry) names may go unrecorded
    /// before it ends; `None`: never.
    pub fn idle_timeout(&self) -> Option<Duration> {
        self.expiry.rules.otherwise()
    }

    /// Which series end when idle, and after how long.
    pub fn series_expiry(&self) -> &SeriesExpiry {
        &self.expiry.rules
    }

    /// Which records leave an exemplar in this registry's histograms.
    pub fn exemplar_filter(&self) -> ExemplarFilter {
        self.exemplar_filter
    }

    pub(crate) fn expiry(&self) -> &Expiry {
        &self.expiry
    }

    /// Adds something that holds series (bound handles), asked to let go
    /// of idle and forgotten ones before each sweep; kept while it lives.
    pub fn add_holder(&self, holder: Weak<dyn Holder>) {
        self.expiry.holders.add(holder);
    }

    fn holders(&self) -> Vec<Arc<dyn Holder>> {
        self.expiry.holders.live()
    }

    fn all(&self) -> Vec<Arc<dyn Collect>> {
        self.instruments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .in_order
            .clone()
    }

    /// Ends every series idle for its timeout (nothing without one):
    /// holders let go of their idle handles first. Each collection sweeps
    /// before it reads.
    pub fn sweep(&self) {
        let now = self.expiry.now();
        for holder in self.holders() {
            holder.sweep(now, self.expiry.rules.shortest());
        }
        if !self.expiry.rules.is_never() {
            for instrument in self.all() {
                instrument.sweep();
            }
        }
    }

    /// [`sweep`](Self::sweep) from inside an SDK collection, which holds the
    /// provider's pipeline lock: holders are left to the next full sweep
    /// (the metrics bridge's takes a lock under which it builds SDK
    /// instruments), and when an instrument is being built (under the
    /// instruments' lock, waiting on the pipeline's) nothing is swept.
    pub(crate) fn sweep_in_collection(&self) {
        if self.expiry.rules.is_never() {
            return;
        }
        let Ok(instruments) = self.instruments.try_lock() else {
            return;
        };
        let all = instruments.in_order.clone();
        drop(instruments);
        for instrument in all {
            instrument.sweep();
        }
    }

    /// Ends every series carrying `attribute` in the instruments of
    /// `scope` (every scope when `None`); see
    /// [`Meter::forget`](crate::Meter::forget).
    pub fn forget(&self, scope: Option<&InstrumentationScope>, attribute: &KeyValue) -> Forgotten {
        for holder in self.holders() {
            holder.forget(attribute);
        }
        let mut forgotten = Forgotten::default();
        for instrument in self.all() {
            if scope.is_none_or(|s| s == instrument.scope()) {
                forgotten += instrument.forget(attribute);
            }
        }
        forgotten
    }

    /// How many series the owned instruments hold now, overflow series
    /// aside.
    pub fn series(&self) -> usize {
        self.all().iter().map(|i| i.len()).sum()
    }

    /// When each series of the owned counters, up-down counters and gauges
    /// started, by scope name and version, instrument name (lower case) and
    /// attributes: their points come through the SDK, whose start time is
    /// the instrument's.
    pub fn scalar_starts(&self) -> Starts {
        let mut starts = Starts::new();
        for instrument in self.all() {
            let scope = instrument.scope();
            let mut series = HashMap::new();
            instrument.starts(&mut |attributes, start| {
                series.insert(attributes.to_vec(), start);
            });
            if !series.is_empty() {
                starts.insert(
                    (
                        scope.name().to_owned(),
                        scope.version().map(str::to_owned),
                        instrument.name().to_ascii_lowercase(),
                    ),
                    series,
                );
            }
        }
        starts
    }

    /// When the registry was made: the start time of its cumulative series.
    pub fn start_time(&self) -> SystemTime {
        self.start
    }

    /// The instrument `name` of `scope`, made with `make` unless one of
    /// that type exists.
    pub(crate) fn instrument<I: Collect + Any>(
        &self,
        scope: &InstrumentationScope,
        name: &str,
        make: impl FnOnce() -> Arc<I>,
    ) -> Arc<I> {
        let key = (scope.clone(), name.to_ascii_lowercase());
        let mut instruments = self
            .instruments
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = instruments.by_key.get(&key)
            && let Ok(same) = Arc::clone(existing).downcast::<I>()
        {
            return same;
        }
        let made = make();
        instruments
            .by_key
            .insert(key, Arc::clone(&made) as Arc<dyn Any + Send + Sync>);
        instruments
            .in_order
            .push(Arc::clone(&made) as Arc<dyn Collect>);
        made
    }

    /// Every owned series now, by scope in the order scopes first appeared.
    /// `reset_extremes` is for a delta reader: minimum and maximum start
    /// over after this reading.
    pub fn collect(&self, reset_extremes: bool) -> Vec<OwnedScope> {
        let instruments: Vec<Arc<dyn Collect>> = self
            .instruments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .in_order
            .clone();
        let mut scopes: Vec<OwnedScope> = Vec::new();
        for instrument in instruments {
            let Some(metric) = instrument.collect(reset_extremes) else {
                continue;
            };
            match scopes.iter_mut().find(|s| &s.scope == instrument.scope()) {
                Some(scope) => scope.metrics.push(metric),
                None => scopes.push(OwnedScope {
                    scope: instrument.scope().clone(),
                    metrics: vec![metric],
                }),
            }
        }
        scopes
    }

    /// Adds a source of families (another library's registry) that every
    /// collection gathers from now on.
    pub fn add_source(&self, source: Arc<dyn Gather>) {
        self.gathering
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .sources
            .push(source);
    }

    /// Every source's families now, each family within the cardinality
    /// limit (`NEMO_LENS_CARDINALITY_LIMIT`, its later label sets merged
    /// into one overflow series) and each series with the time it was first
    /// gathered.
    ///
    /// A family name two sources give (one registry installed twice, or one
    /// name in two registries) is the first source's alone.
    pub fn gather(&self) -> Vec<GatheredScope> {
        // Gathered with no lock held: a library's collectors run user code.
        let mut scopes: Vec<GatheredScope> = self
            .sources()
            .iter()
            .enumerate()
            .map(|(i, source)| self.limited(i, source, source.gather()))
            .collect();
        self.once(&mut scopes);
        scopes
    }

    fn once(&self, scopes: &mut [GatheredScope]) {
        let mut gathering = self
            .gathering
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        super::gathered::once(scopes, &mut gathering.repeated);
    }

    /// [`gather`](Self::gather) for a text scrape: a source that writes
    /// the text format itself gives its families as written, unless one is
    /// past the cardinality limit (then they are gathered and limited).
    #[cfg(any(feature = "prometheus", feature = "testing"))]
    pub fn gather_for_text(&self) -> Vec<GatheredScope> {
        let limit = crate::overflow::limit();
        let mut scopes = self
            .sources()
            .iter()
            .enumerate()
            .map(|(i, source)| {
                let blocks = source.text().map(|text| super::text_blocks::blocks(&text));
                let within = |blocks: &Vec<super::TextBlock>| {
                    let gathering = self
                        .gathering
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    blocks
                        .iter()
                        .all(|b| gathering.within(i, &b.name, b.series, limit))
                };
                match blocks.filter(within) {
                    Some(text) => GatheredScope {
                        scope: source.scope().clone(),
                        families: Vec::new(),
                        text,
                    },
                    None => self.limited(i, source, source.gather()),
                }
            })
            .collect::<Vec<_>>();
        self.once(&mut scopes);
        scopes
    }

    fn sources(&self) -> Vec<Arc<dyn Gather>> {
        self.gathering
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .sources
            .clone()
    }

    /// `families` of source number `i`, within the cardinality limit and
    /// with their start times.
    fn limited(
        &self,
        i: usize,
        source: &Arc<dyn Gather>,
        mut families: Vec<super::GatheredFamily>,
    ) -> GatheredScope {
        let now = SystemTime::now();
        let limit = crate::overflow::limit();
        let mut gathering = self
            .gathering
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for family in &mut families {
            gathering.limit(i, family, limit, now);
        }
        GatheredScope {
            scope: source.scope().clone(),
            families,
            text: Vec::new(),
        }
    }

    /// The names of the instruments built on a meter of this registry (the
    /// owned ones, then the observables
    /// [declared](Self::declare_observable)), in the order they were built:
    /// those never recorded too, which a reading leaves out.
    pub fn instrument_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .instruments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .in_order
            .iter()
            .map(|instrument| instrument.name().to_owned())
            .collect();
        names.extend(
            self.observables
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .cloned(),
        );
        names
    }

    /// Notes an observable instrument built on a meter of this registry
    /// (the SDK holds it, so the registry would not know its name), for
    /// [`instrument_names`](Self::instrument_names).
    pub fn declare_observable(&self, name: &str) {
        let mut observables = self
            .observables
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !observables.iter().any(|known| known == name) {
            observables.push(name.to_owned());
        }
    }

    /// How many owned instruments the registry holds.
    pub fn len(&self) -> usize {
        self.instruments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .in_order
            .len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("instruments", &self.len())
            .finish_non_exhaustive()
    }
}
