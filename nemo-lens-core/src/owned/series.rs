//! The series of one owned instrument, by attribute set, under the
//! cardinality limit, each ending when idle or forgotten (see
//! [`expiry`](super::expiry)).

use std::collections::HashMap;
use std::sync::atomic::{fence, Ordering};
use std::sync::{Arc, OnceLock, PoisonError, RwLock, RwLockWriteGuard};
use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;

use super::expiry::{self, Forgotten, InstrumentExpiry};
use crate::cells;
use crate::overflow::OVERFLOW_ATTRIBUTE;

/// A cell that says whether it was recorded into since a sweep last asked.
pub trait Touched: Send + Sync + 'static {
    /// Whether recorded into since the last call; lowers the mark.
    fn take_touched(&self) -> bool;
}

macro_rules! touched {
    ($($cell:ident),*) => {$(
        impl<T: cells::CellValue> Touched for cells::$cell<T> {
            fn take_touched(&self) -> bool {
                cells::$cell::take_touched(self)
            }
        }
    )*};
}

touched!(Sum, LastValue, Histogram, ExponentialHistogram);

type HashMapGuard<'a, C> = RwLockWriteGuard<'a, HashMap<Vec<KeyValue>, Arc<C>>>;

/// One series and what its expiry needs.
struct Entry<C> {
    /// Sorted by key, the first of a repeated key kept: as exported.
    attributes: Vec<KeyValue>,
    series: Arc<C>,
    /// The spellings it is found under in `by_attributes`, one reference
    /// each.
    aliases: Vec<Vec<KeyValue>>,
    start: SystemTime,
    /// When a harvest last saw it recorded into, by the expiry's clock.
    seen: Duration,
    /// How long it may go unrecorded; `None`: never.
    timeout: Option<Duration>,
    /// Recorded since the last collection read it (a harvest between
    /// collections took its flag): it does not end before one reads it.
    unread: bool,
    /// Made or recorded by `start_at_zero`: never idle.
    pinned: bool,
}

struct Entries<C> {
    in_order: Vec<Entry<C>>,
    /// Entries with attributes, which the limit counts.
    keyed: usize,
    /// When the touched flags were last taken, by the expiry's clock.
    harvested: Option<Duration>,
}

/// Series keyed by attribute set. Both the spelling recorded and the one
/// exported (sorted by key, the first of a repeated key kept) find a series,
/// as in the SDK. At most `limit` live attribute sets (the empty one aside)
/// get a series of their own; later ones share the overflow series
/// (`otel.metric.overflow=true`), as the SDK's do.
pub(crate) struct SeriesMap<C> {
    by_attributes: RwLock<HashMap<Vec<KeyValue>, Arc<C>>>,
    entries: RwLock<Entries<C>>,
    overflow: OnceLock<(Arc<C>, SystemTime)>,
    limit: usize,
    expiry: InstrumentExpiry,
    /// Whether a series holds live state (an up-down counter away from
    /// zero), which keeps it however long it is idle.
    live: fn(&C) -> bool,
}

impl<C: Touched> SeriesMap<C> {
    pub(crate) fn new(limit: usize, expiry: InstrumentExpiry, live: fn(&C) -> bool) -> Self {
        SeriesMap {
            by_attributes: RwLock::default(),
            entries: RwLock::new(Entries {
                in_order: Vec::new(),
                keyed: 0,
                harvested: None,
            }),
            overflow: OnceLock::new(),
            limit,
            expiry,
            live,
        }
    }

    /// Both maps for writing, in the one order every writer takes them.
    fn write(&self) -> (HashMapGuard<'_, C>, RwLockWriteGuard<'_, Entries<C>>) {
        (
            self.by_attributes
                .write()
                .unwrap_or_else(PoisonError::into_inner),
            self.entries.write().unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// The series of `attributes`, made with `make` on first use.
    pub(crate) fn get(&self, attributes: &[KeyValue], make: impl Fn() -> C) -> Arc<C> {
        if !expiry::pinning()
            && let Some(found) = self
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
        let may_end = self.expiry.resolved.may_end();
        let mut holders_asked = false;
        loop {
            let (mut by_attributes, mut entries) = self.write();
            if let Some(found) = known(&mut by_attributes, &mut entries, attributes, &sorted) {
                return found;
            }
            if may_end {
                self.harvest_if_due(&mut entries);
            }
            if !sorted.is_empty() && entries.keyed >= self.limit {
                if may_end && !holders_asked {
                    // Room that idle series hold goes to new ones before
                    // overflow; their holders let go of them first, with
                    // no lock of ours held (a holder's lock may be held
                    // by a thread waiting on ours).
                    drop((by_attributes, entries));
                    let now = self.expiry.now();
                    for holder in self.expiry.holders.live() {
                        holder.sweep_for_room(now, self.expiry.shortest);
                    }
                    holders_asked = true;
                    continue;
                }
                self.sweep_locked(&mut by_attributes, &mut entries, false);
                if entries.keyed >= self.limit {
                    let (overflow, _) = self
                        .overflow
                        .get_or_init(|| (Arc::new(make()), SystemTime::now()));
                    return Arc::clone(overflow);
                }
            }
            let made = Arc::new(make());
            let mut aliases = vec![sorted.clone()];
            by_attributes.insert(sorted.clone(), Arc::clone(&made));
            if attributes != sorted.as_slice() {
                aliases.push(attributes.to_vec());
                by_attributes.insert(attributes.to_vec(), Arc::clone(&made));
            }
            entries.keyed += usize::from(!sorted.is_empty());
            let timeout = self.expiry.resolved.timeout_of(&sorted);
            entries.in_order.push(Entry {
                attributes: sorted,
                series: Arc::clone(&made),
                aliases,
                start: SystemTime::now(),
                seen: self.expiry.now(),
                timeout,
                unread: false,
                pinned: expiry::pinning(),
            });
            return made;
        }
    }

    /// Notes which series were recorded since the last harvest, unless it
    /// ran less than a sixteenth of the timeout ago, and has the holders
    /// do the same: the series made in waves, a scrape apart or not, are
    /// timed from their last record rather than from the next scrape.
    fn harvest_if_due(&self, entries: &mut Entries<C>) {
        let Some(every) = self.expiry.harvest_every() else {
            return;
        };
        let now = self.expiry.now();
        self.expiry.holders.harvest(now, every);
        if entries
            .harvested
            .is_some_and(|last| now.saturating_sub(last) < every)
        {
            return;
        }
        entries.harvested = Some(now);
        for entry in &mut entries.in_order {
            if entry.series.take_touched() {
                entry.seen = now;
                entry.unread = true;
            }
        }
    }

    /// Runs `f` on every series in the order they were made, the overflow
    /// series last, each with its attributes as exported and when it
    /// started.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&[KeyValue], &C, SystemTime)) {
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        for entry in &entries.in_order {
            f(&entry.attributes, &entry.series, entry.start);
        }
        if let Some((overflow, start)) = self.overflow.get() {
            f(&[KeyValue::new(OVERFLOW_ATTRIBUTE, true)], overflow, *start);
        }
    }

    /// Ends the series idle for their timeout; nothing without one.
    pub(crate) fn sweep(&self) {
        if !self.expiry.resolved.may_end() {
            return;
        }
        let (mut by_attributes, mut entries) = self.write();
        self.sweep_locked(&mut by_attributes, &mut entries, true);
    }

    /// Ends the series idle past their timeout. A collection sweeps right
    /// before it reads (`collecting`); any other sweep (a new series at the
    /// limit) keeps the series whose records no collection has read yet.
    fn sweep_locked(
        &self,
        by_attributes: &mut HashMap<Vec<KeyValue>, Arc<C>>,
        entries: &mut Entries<C>,
        collecting: bool,
    ) {
        if !self.expiry.resolved.may_end() {
            return;
        }
        let now = self.expiry.now();
        entries.harvested = Some(now);
        let live = self.live;
        let before = entries.in_order.len();
        entries.in_order.retain_mut(|entry| {
            if entry.series.take_touched() {
                entry.seen = now;
                entry.unread = !collecting;
                return true;
            }
            if entry.unread {
                // A collection reads it next; until then it stays.
                entry.unread = !collecting;
                return true;
            }
            let Some(timeout) = entry.timeout else {
                return true;
            };
            if entry.pinned
                || now.saturating_sub(entry.seen) < timeout
                || live(&entry.series)
                || !unheld(entry)
            {
                return true;
            }
            // A record through a handle let go of since the check above
            // raised the flag before it let go: seen through the fence.
            if entry.series.take_touched() {
                entry.seen = now;
                entry.unread = !collecting;
                return true;
            }
            for alias in &entry.aliases {
                by_attributes.remove(alias);
            }
            false
        });
        if entries.in_order.len() != before {
            entries.keyed = entries
                .in_order
                .iter()
                .filter(|e| !e.attributes.is_empty())
                .count();
        }
    }

    /// Ends every series whose attributes carry `attribute`, unless held.
    pub(crate) fn forget(&self, attribute: &KeyValue) -> Forgotten {
        let mut forgotten = Forgotten::default();
        let (mut by_attributes, mut entries) = self.write();
        entries.in_order.retain(|entry| {
            if !entry.attributes.contains(attribute) {
                return true;
            }
            if !unheld(entry) {
                forgotten.held += 1;
                return true;
            }
            for alias in &entry.aliases {
                by_attributes.remove(alias);
            }
            forgotten.series += 1;
            false
        });
        entries.keyed = entries
            .in_order
            .iter()
            .filter(|e| !e.attributes.is_empty())
            .count();
        forgotten
    }

    /// Ends the series of `attributes` unless something holds it;
    /// whether it ended.
    pub(crate) fn remove(&self, attributes: &[KeyValue]) -> bool {
        let sorted = sort_and_dedup(attributes);
        let (mut by_attributes, mut entries) = self.write();
        let Some(at) = entries.in_order.iter().position(|e| e.attributes == sorted) else {
            return false;
        };
        if !unheld(&entries.in_order[at]) {
            return false;
        }
        let entry = entries.in_order.remove(at);
        for alias in &entry.aliases {
            by_attributes.remove(alias);
        }
        entries.keyed -= usize::from(!entry.attributes.is_empty());
        true
    }

    /// How many series it has now, the overflow series aside.
    pub(crate) fn len(&self) -> usize {
        self.entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .in_order
            .len()
    }
}

/// The series of `attributes` (spelt `sorted` when exported), if the map
/// has it: a spelling first seen is added as an alias, and a series found
/// from inside `start_at_zero` is pinned.
fn known<C>(
    by_attributes: &mut HashMap<Vec<KeyValue>, Arc<C>>,
    entries: &mut Entries<C>,
    attributes: &[KeyValue],
    sorted: &[KeyValue],
) -> Option<Arc<C>> {
    let found = by_attributes
        .get(attributes)
        .or_else(|| by_attributes.get(sorted))
        .map(Arc::clone)?;
    if let Some(entry) = entries
        .in_order
        .iter_mut()
        .find(|e| Arc::ptr_eq(&e.series, &found))
    {
        entry.pinned |= expiry::pinning();
        if !by_attributes.contains_key(attributes) {
            entry.aliases.push(attributes.to_vec());
            by_attributes.insert(attributes.to_vec(), Arc::clone(&found));
        }
    }
    Some(found)
}

/// Whether nothing but the map holds `entry`'s series. Called with the
/// map's write lock held, so no reference can be taken from the map
/// meanwhile; the fence makes what a holder did before letting go (its
/// records, their flags) visible to what the caller reads next.
fn unheld<C>(entry: &Entry<C>) -> bool {
    let unheld = Arc::strong_count(&entry.series) <= 1 + entry.aliases.len();
    fence(Ordering::Acquire);
    unheld
}

fn sort_and_dedup(attributes: &[KeyValue]) -> Vec<KeyValue> {
    let mut sorted = attributes.to_vec();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    sorted.dedup_by(|later, first| later.key == first.key);
    sorted
}
