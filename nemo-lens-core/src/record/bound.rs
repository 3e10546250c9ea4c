//! Bound instrument handles per set of attribute values.
//!
//! The SDK's unbound `record(value, &attrs)` hashes and compares the whole
//! attribute list on every call; a profile of the inference set showed half
//! its instructions in SipHash over those lists. A bound handle skips that
//! look-up. Sets whose attributes are all static bind once, and so do the
//! instruments no `#[attribute]` of a set reaches; for the others, sets with
//! `#[attribute]` fields keep a [`BoundMap`] from the attribute values to a
//! bundle of handles, looked up without a lock or an allocation. The values
//! are hashed a word at a time, and the first values a map saw are compared
//! before the table is probed: a server that serves one model (the usual
//! deployment) finds its bundle there. Either way a look-up protects one
//! snapshot of the map (two locked instructions): the first entry lives in
//! it beside the table.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;
use hashbrown::HashTable;
use opentelemetry::KeyValue;

pub use super::key::KeyPart;
use super::key::{self, Key, Part};

use crate::owned::expiry::{self, Holder};

/// Bundles a [`BoundMap`] holds at most. Past it, records take the unbound
/// path, so memory stays bounded however many model names a server sees; the
/// SDK's own cardinality limit applies on both paths alike.
pub const BOUND_LIMIT: usize = 1024;

/// A bundle and what tells whether it is in use.
struct Slot<B> {
    bundle: B,
    /// Raised by each look-up that finds it, lowered by each sweep.
    used: AtomicBool,
    /// When a sweep last saw it used, in nanoseconds of the registry's
    /// clock.
    seen: AtomicU64,
}

impl<B> Slot<B> {
    #[inline]
    fn mark(&self) {
        if !self.used.load(Ordering::Relaxed) {
            self.used.store(true, Ordering::Relaxed);
        }
    }
}

struct Entry<B> {
    hash: u64,
    // Shared, so that copying the table on insert copies pointers only.
    words: Arc<[u64]>,
    values: Arc<[Option<Part>]>,
    slot: Arc<Slot<B>>,
}

impl<B> Clone for Entry<B> {
    fn clone(&self) -> Self {
        Entry {
            hash: self.hash,
            words: Arc::clone(&self.words),
            values: Arc::clone(&self.values),
            slot: Arc::clone(&self.slot),
        }
    }
}

impl<B> Entry<B> {
    #[inline]
    fn matches(&self, key: &Key, parts: &[Option<KeyPart<'_>>]) -> bool {
        self.hash == key.hash && key.matches(&self.words, &self.values, parts)
    }
}

/// Read-mostly map from attribute values to a bundle of bound handles.
///
/// Readers load an immutable table through [`ArcSwap`] (no lock, no
/// reference-count traffic on a shared line); writers copy the table, which
/// happens once per distinct attribute set and at most [`BOUND_LIMIT`] times
/// between sweeps.
///
/// A map built for a meter with owned series lets go of the bundles it has
/// not used for the idle timeout at each sweep, and of those carrying a
/// forgotten value, so the series their handles hold can end: a router that
/// has seen a hundred thousand backends keeps bundles for the live ones.
pub struct BoundMap<B>(Arc<Inner<B>>);

struct Inner<B> {
    snapshot: ArcSwap<Snapshot<B>>,
    writer: Mutex<()>,
    /// The attribute keys, as the first look-up gave them (every look-up
    /// of one map gives the same).
    keys: OnceLock<Box<[&'static str]>>,
}

/// What a look-up reads, swapped whole by each insert and sweep.
struct Snapshot<B> {
    /// The first entry inserted and still held, checked before the table.
    first: Option<Entry<B>>,
    table: HashTable<Entry<B>>,
}

impl<B> Default for BoundMap<B> {
    fn default() -> Self {
        BoundMap(Arc::new(Inner {
            snapshot: ArcSwap::from_pointee(Snapshot {
                first: None,
                table: HashTable::new(),
            }),
            writer: Mutex::new(()),
            keys: OnceLock::new(),
        }))
    }
}

impl<B: Send + Sync + 'static> BoundMap<B> {
    /// An empty map whose bundles `meter`'s registry sweeps (see the type's
    /// docs); an empty map that keeps its bundles for a meter without one.
    pub fn for_meter(meter: &crate::Meter) -> Self {
        let map = Self::default();
        if let Some(registry) = meter.registry() {
            let inner: Arc<dyn Holder> = map.0.clone();
            registry.add_holder(Arc::downgrade(&inner));
        }
        map
    }
}

impl<B> BoundMap<B> {
    /// An empty map that keeps every bundle.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many bundles the map holds.
    pub fn len(&self) -> usize {
        self.0.snapshot.load().table.len()
    }

    /// Whether the map holds no bundle.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs `with` on the bundle for `parts` (the values of the attributes
    /// `keys`, `None` where absent), creating it with `make` from the
    /// attribute list on first use. `None` when the map is full, or for a
    /// combination of more than 16 attributes: the caller records unbound
    /// (the same series, looked up by the SDK's rules).
    #[inline]
    pub fn with<R>(
        &self,
        keys: &[&'static str],
        parts: &[Option<KeyPart<'_>>],
        make: impl FnOnce(Box<[KeyValue]>) -> B,
        with: impl FnOnce(&B) -> R,
    ) -> Option<R> {
        // `start_at_zero` records unbound, so that each series it records
        // is pinned where it lives, and the bundle is not: the set's other
        // series of those values still end when idle.
        if expiry::pinning() {
            return None;
        }
        let mut buffer = key::buffer();
        let key = Key::of(parts, &mut buffer)?;
        let inner = &*self.0;
        {
            let snapshot = inner.snapshot.load();
            if let Some(first) = &snapshot.first
                && first.matches(&key, parts)
            {
                first.slot.mark();
                return Some(with(&first.slot.bundle));
            }
            let table = &snapshot.table;
            if let Some(entry) = table.find(key.hash, |e| e.matches(&key, parts)) {
                entry.slot.mark();
                return Some(with(&entry.slot.bundle));
            }
            // Full: say so without touching the writer lock, so servers past
            // the limit do not serialise on it.
            if table.len() >= BOUND_LIMIT {
                return None;
            }
        }
        inner
            .insert(&key, keys, parts, make)
            .map(|slot| with(&slot.bundle))
    }
}

impl<B> Inner<B> {
    #[cold]
    fn insert(
        &self,
        key: &Key,
        keys: &[&'static str],
        parts: &[Option<KeyPart<'_>>],
        make: impl FnOnce(Box<[KeyValue]>) -> B,
    ) -> Option<Arc<Slot<B>>> {
        let _ = self.keys.set(keys.into());
        let values: Arc<[Option<Part>]> = parts.iter().map(|part| part.map(Part::of)).collect();
        let attributes = keys
            .iter()
            .zip(values.iter())
            .filter_map(|(key, value)| {
                let value = value.as_ref()?.to_value();
                Some(KeyValue::new(
                    opentelemetry::Key::from_static_str(key),
                    value,
                ))
            })
            .collect();
        // Made outside the writer lock: binding may make series, and a
        // series map at its cardinality limit asks this map's sweep to
        // let go of idle bundles, which takes the lock. Two threads may
        // make a bundle for the same values; the second is dropped.
        let made = make(attributes);
        // A writer that panicked left the table intact: it is swapped whole.
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let snapshot = self.snapshot.load_full();
        if let Some(entry) = snapshot.table.find(key.hash, |e| e.matches(key, parts)) {
            entry.slot.mark();
            return Some(Arc::clone(&entry.slot));
        }
        if snapshot.table.len() >= BOUND_LIMIT {
            return None;
        }
        let slot = Arc::new(Slot {
            bundle: made,
            used: AtomicBool::new(true),
            seen: AtomicU64::new(0),
        });
        let entry = Entry {
            hash: key.hash,
            words: key.words().into(),
            values,
            slot: Arc::clone(&slot),
        };
        let first = snapshot.first.clone().or_else(|| Some(entry.clone()));
        let mut table = HashTable::clone(&snapshot.table);
        table.insert_unique(key.hash, entry, |e| e.hash);
        self.snapshot.store(Arc::new(Snapshot { first, table }));
        Some(slot)
    }

    /// Keeps the entries `keep` says to keep, under the writer lock; the
    /// first entry goes with its table entry.
    fn retain(&self, mut keep: impl FnMut(&Entry<B>) -> bool) {
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let snapshot = self.snapshot.load_full();
        let mut kept = HashTable::with_capacity(snapshot.table.len());
        let mut dropped = false;
        for entry in snapshot.table.iter() {
            if keep(entry) {
                kept.insert_unique(entry.hash, entry.clone(), |e| e.hash);
            } else {
                dropped = true;
            }
        }
        if !dropped {
            return;
        }
        let first = snapshot.first.clone().filter(|first| {
            kept.find(first.hash, |e| Arc::ptr_eq(&e.slot, &first.slot))
                .is_some()
        });
        // Readers that loaded the old snapshot keep it, and the handles in
        // it, until they are done: the series stay held until then.
        self.snapshot
            .store(Arc::new(Snapshot { first, table: kept }));
    }
}

fn nanos(time: Duration) -> u64 {
    u64::try_from(time.as_nanos()).unwrap_or(u64::MAX)
}

impl<B> Slot<B> {
    /// Notes it as used at `now` if it was used since last asked.
    fn harvest(&self, now: u64) -> bool {
        let used = self.used.swap(false, Ordering::Relaxed);
        if used {
            self.seen.store(now, Ordering::Relaxed);
        }
        used
    }
}

impl<B: Send + Sync> Holder for Inner<B> {
    fn sweep(&self, now: Duration, timeout: Option<Duration>) {
        let Some(timeout) = timeout else {
            return;
        };
        let (now, timeout) = (nanos(now), nanos(timeout));
        self.retain(|entry| {
            let slot = &entry.slot;
            slot.harvest(now) || now.saturating_sub(slot.seen.load(Ordering::Relaxed)) < timeout
        });
    }

    fn harvest(&self, now: Duration) {
        let now = nanos(now);
        for entry in self.snapshot.load().table.iter() {
            entry.slot.harvest(now);
        }
    }

    fn sweep_for_room(&self, now: Duration, timeout: Option<Duration>) {
        // Bundles are made outside the writer lock (see `insert`), so no
        // record waits on a series map while holding it.
        self.sweep(now, timeout);
    }

    fn forget(&self, attribute: &KeyValue) {
        let Some(keys) = self.keys.get() else {
            return;
        };
        let Some(at) = keys.iter().position(|k| *k == attribute.key.as_str()) else {
            return;
        };
        self.retain(|entry| {
            !entry
                .values
                .get(at)
                .and_then(Option::as_ref)
                .is_some_and(|part| part.is(&attribute.value))
        });
    }
}

/// The attributes a field binds with: those of `all` whose key `only` keeps
/// (every one when `None`: the field is not scoped), then its static `pairs`.
pub fn field_attributes(
    all: &[KeyValue],
    only: Option<&[&'static str]>,
    pairs: &[KeyValue],
) -> Vec<KeyValue> {
    let kept = all
        .iter()
        .filter(|kv| only.is_none_or(|keys| keys.contains(&kv.key.as_str())));
    let mut attributes = Vec::with_capacity(all.len() + pairs.len());
    attributes.extend(kept.cloned());
    attributes.extend_from_slice(pairs);
    attributes
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: [&str; 2] = ["model", "rank"];

    #[test]
    fn creates_a_bundle_once_per_distinct_values() {
        let map: BoundMap<Box<[KeyValue]>> = BoundMap::new();
        let llama = [Some(KeyPart::Str("llama")), Some(KeyPart::I64(3))];
        let first = map
            .with(&KEYS, &llama, |attrs| attrs, |b| b.clone())
            .unwrap();
        assert_eq!(
            &*first,
            [KeyValue::new("model", "llama"), KeyValue::new("rank", 3)]
        );
        let mut made = false;
        map.with(
            &KEYS,
            &llama,
            |a| {
                made = true;
                a
            },
            |_| (),
        );
        assert!(!made, "the second look-up finds the bundle");
        let absent = [Some(KeyPart::Str("llama")), None];
        let partial = map
            .with(&KEYS, &absent, |attrs| attrs, |b| b.clone())
            .unwrap();
        assert_eq!(&*partial, [KeyValue::new("model", "llama")]);
        assert_eq!(map.len(), 2);
    }

    #[test]
    fn texts_that_differ_in_one_byte_find_bundles_of_their_own() {
        let map: BoundMap<Box<[KeyValue]>> = BoundMap::new();
        let text = "abcdefghijklmnopqrstuvwxyz0123456789";
        let mut made = 0;
        for len in [3, 8, 12, 16, 17, 36] {
            let a = &text[..len];
            for at in [0, len / 2, len - 1] {
                let mut b = a.as_bytes().to_vec();
                b[at] = b'#';
                let b = String::from_utf8(b).unwrap();
                for value in [a, b.as_str()] {
                    let bundle = map
                        .with(
                            &KEYS[..1],
                            &[Some(KeyPart::Str(value))],
                            |a| a,
                            |b| b.clone(),
                        )
                        .unwrap();
                    assert_eq!(&*bundle, [KeyValue::new("model", value.to_owned())]);
                }
            }
            made += 4;
        }
        // Each length: the text, and three texts one byte off.
        assert_eq!(map.len(), made);
    }

    #[test]
    fn values_that_differ_from_the_first_find_their_own_bundle() {
        let map: BoundMap<Box<[KeyValue]>> = BoundMap::new();
        let sets = [
            [Some(KeyPart::Str("llama-3-8b")), Some(KeyPart::I64(3))],
            [Some(KeyPart::Str("llama-3-8b")), Some(KeyPart::I64(4))],
            [Some(KeyPart::Str("llama-3-8c")), Some(KeyPart::I64(3))],
            [Some(KeyPart::Str("llama-3-8b")), None],
        ];
        for _ in 0..2 {
            for parts in &sets {
                let bundle = map.with(&KEYS, parts, |a| a, |b| b.clone()).unwrap();
                let expected: Vec<KeyValue> = KEYS
                    .iter()
                    .zip(parts)
                    .filter_map(|(key, part)| {
                        Some(KeyValue::new(*key, Part::of((*part)?).to_value()))
                    })
                    .collect();
                assert_eq!(&*bundle, expected.as_slice());
            }
        }
        assert_eq!(map.len(), sets.len());
    }

    #[test]
    fn stops_growing_at_the_limit() {
        let map: BoundMap<()> = BoundMap::new();
        let names: Vec<String> = (0..BOUND_LIMIT + 10).map(|i| format!("m{i}")).collect();
        let bound = names
            .iter()
            .filter(|name| {
                map.with(&KEYS, &[Some(KeyPart::Str(name)), None], |_| (), |_| ())
                    .is_some()
            })
            .count();
        assert_eq!(bound, BOUND_LIMIT);
        assert_eq!(map.len(), BOUND_LIMIT);
        // Known values are still found once the map is full.
        assert!(map
            .with(&KEYS, &[Some(KeyPart::Str("m0")), None], |_| (), |_| ())
            .is_some());
    }
}
