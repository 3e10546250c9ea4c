//! The series of one owned instrument, by attribute set, under the
//! cardinality limit.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use opentelemetry::KeyValue;

use crate::export::overflow::OVERFLOW_ATTRIBUTE;

/// Series keyed by attribute set. Both the spelling recorded and the one
/// exported (sorted by key, the first of a repeated key kept) find a series,
/// as in the SDK. At most `limit` attribute sets (the empty one aside) get
/// a series of their own; later ones share the overflow series
/// (`otel.metric.overflow=true`), as the SDK's do.
pub(crate) struct SeriesMap<C> {
    by_attributes: RwLock<HashMap<Vec<KeyValue>, Arc<C>>>,
    in_order: RwLock<Vec<(Vec<KeyValue>, Arc<C>)>>,
    overflow: OnceLock<Arc<C>>,
    limit: usize,
}

impl<C> SeriesMap<C> {
    pub(crate) fn new(limit: usize) -> Self {
        SeriesMap {
            by_attributes: RwLock::default(),
            in_order: RwLock::default(),
            overflow: OnceLock::new(),
            limit,
        }
    }

    /// The series of `attributes`, made with `make` on first use.
    pub(crate) fn get(&self, attributes: &[KeyValue], make: impl Fn() -> C) -> Arc<C> {
        if let Some(found) = self
            .by_attributes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(attributes)
        {
            return Arc::clone(found);
        }
        self.insert(attributes, make)
    }

    #[cold]
    fn insert(&self, attributes: &[KeyValue], make: impl Fn() -> C) -> Arc<C> {
        let sorted = sort_and_dedup(attributes);
        let mut by_attributes = self
            .by_attributes
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = by_attributes
            .get(attributes)
            .or_else(|| by_attributes.get(&sorted))
        {
            let found = Arc::clone(found);
            by_attributes.insert(attributes.to_vec(), Arc::clone(&found));
            return found;
        }
        let mut in_order = self
            .in_order
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let counted = in_order.iter().filter(|(a, _)| !a.is_empty()).count();
        if !sorted.is_empty() && counted >= self.limit {
            return Arc::clone(self.overflow.get_or_init(|| Arc::new(make())));
        }
        let made = Arc::new(make());
        by_attributes.insert(attributes.to_vec(), Arc::clone(&made));
        by_attributes.insert(sorted.clone(), Arc::clone(&made));
        in_order.push((sorted, Arc::clone(&made)));
        made
    }

    /// Runs `f` on every series in the order they were made, the overflow
    /// series last, each with its attributes as exported.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&[KeyValue], &C)) {
        for (attributes, series) in self
            .in_order
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            f(attributes, series);
        }
        if let Some(overflow) = self.overflow.get() {
            f(&[KeyValue::new(OVERFLOW_ATTRIBUTE, true)], overflow);
        }
    }
}

fn sort_and_dedup(attributes: &[KeyValue]) -> Vec<KeyValue> {
    let mut sorted = attributes.to_vec();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    sorted.dedup_by(|later, first| later.key == first.key);
    sorted
}
