//! What `#[instruments(observe)]` sets build on: one source of values shared
//! by the observable instruments of a set, called once per collection, and
//! the registration that keeps it reporting.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// The values a set's observable instruments report: the source is called
/// by the first instrument's callback of each collection (the SDK runs
/// callbacks in the order the instruments were built), and every
/// instrument then reads what it returned.
pub struct Observed<T> {
    source: Box<dyn Fn() -> Vec<T> + Send + Sync>,
    latest: Mutex<Vec<T>>,
}

impl<T> Observed<T> {
    /// Shares `source` among the callbacks.
    pub fn new(source: impl Fn() -> Vec<T> + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Observed {
            source: Box::new(source),
            latest: Mutex::new(Vec::new()),
        })
    }

    /// Calls the source and keeps what it returned, for this collection.
    pub fn refresh(&self) {
        let values = (self.source)();
        *self.latest.lock().unwrap_or_else(PoisonError::into_inner) = values;
    }

    /// Runs `f` on the values of the latest refresh.
    pub fn with(&self, f: impl FnOnce(&[T])) {
        f(&self.latest.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// A source registered with `T::observe`: it reports while this value
/// lives. Dropping it ends the source (its series end at the next
/// collection, and it is never called again); [`keep`](Observation::keep)
/// leaves it reporting for as long as the meter lives.
///
/// The callbacks the SDK holds reach the source only through this
/// registration, so nothing else keeps it (or what it captured) alive.
#[must_use = "the source reports only while its Observation lives: keep it, or call keep()"]
pub struct Observation {
    source: Option<Arc<dyn Any + Send + Sync>>,
    registry: Weak<Registrations>,
}

impl Observation {
    /// A registration on a meter that records nothing: there is no source.
    pub fn inactive() -> Self {
        Observation {
            source: None,
            registry: Weak::new(),
        }
    }

    /// Leaves the source reporting for as long as the meter lives, and
    /// `T::observe` on this meter refused for good.
    pub fn keep(mut self) {
        if let (Some(source), Some(registry)) = (self.source.take(), self.registry.upgrade()) {
            registry.keep(source);
        }
    }

    /// Whether a source is registered (`false` on a meter that records
    /// nothing).
    pub fn is_active(&self) -> bool {
        self.source.is_some()
    }
}

impl fmt::Debug for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Observation")
            .field("active", &self.is_active())
            .finish()
    }
}

/// `T::observe` on a meter where a source of `T` already reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObserveError {
    set: &'static str,
}

impl ObserveError {
    /// The observed set, as Rust names its type.
    pub fn set(&self) -> &'static str {
        self.set
    }
}

impl fmt::Display for ObserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is already observed on this meter: two sources of one set would report the \
             same series, so the second is refused; drop the first Observation to replace its \
             source, or return every value from one source",
            self.set
        )
    }
}

impl std::error::Error for ObserveError {}

/// The sources registered on one meter, one per set.
#[derive(Default)]
pub(crate) struct Registrations {
    entries: Mutex<Vec<Entry>>,
}

struct Entry {
    set: TypeId,
    live: Weak<dyn Any + Send + Sync>,
    /// Held here after [`Observation::keep`].
    kept: Option<Arc<dyn Any + Send + Sync>>,
}

impl Registrations {
    /// Registers `source` as `T`'s, unless a live source of `T` reports.
    pub(crate) fn register<T: 'static>(
        self: &Arc<Self>,
        source: Arc<dyn Any + Send + Sync>,
    ) -> Result<Observation, ObserveError> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.retain(|entry| entry.live.strong_count() > 0);
        let set = TypeId::of::<T>();
        if entries.iter().any(|entry| entry.set == set) {
            return Err(ObserveError {
                set: std::any::type_name::<T>(),
            });
        }
        entries.push(Entry {
            set,
            live: Arc::downgrade(&source),
            kept: None,
        });
        Ok(Observation {
            source: Some(source),
            registry: Arc::downgrade(self),
        })
    }

    fn keep(&self, source: Arc<dyn Any + Send + Sync>) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let live = Arc::downgrade(&source);
        if let Some(entry) = entries.iter_mut().find(|e| Weak::ptr_eq(&e.live, &live)) {
            entry.kept = Some(source);
        }
    }
}
