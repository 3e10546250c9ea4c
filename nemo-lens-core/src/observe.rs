//! What `#[instruments(observe)]` sets build on: one source of values shared
//! by the observable instruments of a set, called once per collection, and
//! the registration that keeps it reporting.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

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

/// The one source of an observed set on one meter, which the set's
/// observable instruments (built once per meter, so observing again adds
/// no callback to the SDK) read at each collection.
pub struct ObservedSlot<T> {
    current: Mutex<Option<Arc<Observed<T>>>>,
}

impl<T: Send + 'static> ObservedSlot<T> {
    /// The source reporting now, if any.
    pub fn current(&self) -> Option<Arc<Observed<T>>> {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Makes `source` the set's source on this meter, unless one reports.
    pub fn install(
        self: &Arc<Self>,
        source: Arc<Observed<T>>,
    ) -> Result<Observation, ObserveError> {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if current.is_some() {
            return Err(ObserveError {
                set: std::any::type_name::<T>(),
            });
        }
        *current = Some(source);
        Ok(Observation {
            slot: Some(Arc::clone(self) as Arc<dyn Clear>),
        })
    }
}

/// What an [`Observation`] does to its slot when it ends.
trait Clear: Send + Sync {
    fn clear(&self);
}

impl<T: Send + 'static> Clear for ObservedSlot<T> {
    fn clear(&self) {
        // Dropped outside the lock: a source's captures may take a while.
        let ended = self
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(ended);
    }
}

/// A source registered with `T::observe`: it reports while this value
/// lives. Dropping it ends the source (its series end at the next
/// collection, it is never called again, and what it captured is freed);
/// [`keep`](Observation::keep) leaves it reporting for as long as the meter
/// lives.
#[must_use = "the source reports only while its Observation lives: keep it, or call keep()"]
pub struct Observation {
    slot: Option<Arc<dyn Clear>>,
}

impl Observation {
    /// A registration on a meter that records nothing: there is no source.
    pub fn inactive() -> Self {
        Observation { slot: None }
    }

    /// Leaves the source reporting for as long as the meter lives, and
    /// `T::observe` on this meter refused for good. The meter then holds
    /// the source: a source that holds the meter (a clone captured in its
    /// closure) keeps it alive for good; capture a
    /// [`WeakMeter`](crate::WeakMeter) instead.
    pub fn keep(mut self) {
        self.slot = None;
    }

    /// Whether a source is registered (`false` on a meter that records
    /// nothing, and after [`keep`](Self::keep)).
    pub fn is_active(&self) -> bool {
        self.slot.is_some()
    }
}

impl Drop for Observation {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            slot.clear();
        }
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

/// The slots of the observed sets of one meter, one per set.
#[derive(Default)]
pub(crate) struct Registrations {
    slots: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl Registrations {
    /// `T`'s slot, made (and its instruments built with `build`) on first
    /// use.
    pub(crate) fn slot<T: Send + 'static>(
        &self,
        build: impl FnOnce(&Arc<ObservedSlot<T>>),
    ) -> Arc<ObservedSlot<T>> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = slots.get(&TypeId::of::<T>())
            && let Ok(slot) = Arc::clone(slot).downcast::<ObservedSlot<T>>()
        {
            return slot;
        }
        let slot = Arc::new(ObservedSlot {
            current: Mutex::new(None),
        });
        build(&slot);
        slots.insert(
            TypeId::of::<T>(),
            Arc::clone(&slot) as Arc<dyn Any + Send + Sync>,
        );
        slot
    }
}
