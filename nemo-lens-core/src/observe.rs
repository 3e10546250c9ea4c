//! What `#[instruments(observe)]` sets build on: one source of values shared
//! by the observable instruments of a set, called once per collection.

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
