//! The look-up every macro call makes: key to series, without a lock.
//!
//! Each shard is a hash table behind an `ArcSwap`: readers load it and
//! search it with the key's precomputed hash, comparing whole keys (two
//! label sets with one hash stay two series); writers, on a key's first
//! use, copy the shard with the new entry and swap it in. Entries are
//! `Arc`s, so a copy clones pointers, never keys.

use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use hashbrown::HashTable;

/// A key the registry can look up: its own 64-bit hash, and whole-key
/// equality.
pub(crate) trait RegistryKey: Eq {
    fn hash64(&self) -> u64;
}

impl RegistryKey for metrics::Key {
    #[inline]
    fn hash64(&self) -> u64 {
        self.get_hash()
    }
}

#[cfg(feature = "metrics-023")]
impl RegistryKey for metrics_023::Key {
    #[inline]
    fn hash64(&self) -> u64 {
        self.get_hash()
    }
}

struct Entry<K, T> {
    key: K,
    series: Arc<T>,
}

type Table<K, T> = HashTable<Arc<Entry<K, T>>>;

struct Shard<K, T> {
    table: ArcSwap<Table<K, T>>,
    writer: Mutex<()>,
}

/// What [`Registry::remove`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Removal {
    Removed,
    /// The key did not reach the series.
    Absent,
    /// A reader still held the shard after [`READER_WAIT_YIELDS`] yields;
    /// the entry is still there.
    Busy,
}

/// How long a removal waits for readers of the old shard before giving up.
const READER_WAIT_YIELDS: usize = 10_000;

/// Shards divide the copy a new key costs.
const SHARDS: usize = 16;

pub(crate) struct Registry<K, T> {
    shards: Box<[Shard<K, T>]>,
}

impl<K: RegistryKey, T> Registry<K, T> {
    pub(crate) fn new() -> Self {
        Registry {
            shards: (0..SHARDS)
                .map(|_| Shard {
                    table: ArcSwap::from_pointee(HashTable::new()),
                    writer: Mutex::new(()),
                })
                .collect(),
        }
    }

    #[inline]
    fn shard(&self, hash: u64) -> &Shard<K, T> {
        // The top bits: hashbrown places entries by the low ones.
        &self.shards[(hash >> 59) as usize % SHARDS]
    }

    /// The series of `key`, if registered.
    #[inline]
    pub(crate) fn get(&self, key: &K) -> Option<Arc<T>> {
        let hash = key.hash64();
        let table = self.shard(hash).table.load();
        table
            .find(hash, |entry| entry.key == *key)
            .map(|entry| Arc::clone(&entry.series))
    }

    /// Registers `series` under `key` unless the key already has one, and
    /// returns the key's series, with `true` when it is `series`, newly
    /// registered.
    pub(crate) fn insert(&self, key: K, series: Arc<T>) -> (Arc<T>, bool) {
        let hash = key.hash64();
        let shard = self.shard(hash);
        let _writer = shard.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let current = shard.table.load_full();
        if let Some(entry) = current.find(hash, |entry| entry.key == key) {
            return (Arc::clone(&entry.series), false);
        }
        let mut table: Table<K, T> = HashTable::with_capacity(current.len() + 1);
        for entry in current.iter() {
            table.insert_unique(entry.key.hash64(), Arc::clone(entry), |e| e.key.hash64());
        }
        table.insert_unique(
            hash,
            Arc::new(Entry {
                key,
                series: Arc::clone(&series),
            }),
            |e| e.key.hash64(),
        );
        shard.table.store(Arc::new(table));
        (series, true)
    }

    /// Removes the entry of `key` whose series is `series`, once no reader
    /// holds the shard it was in: after `Removal::Removed`, no look-up can
    /// hand out `series` through `key` any more.
    pub(crate) fn remove(&self, key: &K, series: &Arc<T>) -> Removal {
        let hash = key.hash64();
        let shard = self.shard(hash);
        let _writer = shard.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let current = shard.table.load_full();
        if current
            .find(hash, |entry| {
                entry.key == *key && Arc::ptr_eq(&entry.series, series)
            })
            .is_none()
        {
            return Removal::Absent;
        }
        let mut table: Table<K, T> = HashTable::with_capacity(current.len());
        for entry in current
            .iter()
            .filter(|e| !(e.key == *key && Arc::ptr_eq(&e.series, series)))
        {
            table.insert_unique(entry.key.hash64(), Arc::clone(entry), |e| e.key.hash64());
        }
        drop(current);
        let old = shard.table.swap(Arc::new(table));
        // A reader that loaded the old shard may still clone `series` from
        // it; it holds the old shard (arc-swap pays its debts on a swap)
        // until it is done, which is one look-up.
        for _ in 0..READER_WAIT_YIELDS {
            if Arc::strong_count(&old) == 1 {
                return Removal::Removed;
            }
            std::thread::yield_now();
        }
        // A reader preempted mid-look-up may yet clone `series`: the caller
        // could not tell it from an unheld one, so the entry goes back (the
        // writer lock kept the old shard current).
        shard.table.store(old);
        Removal::Busy
    }

    /// Every registered series, for tests and upkeep.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.table.load().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_keys_are_compared_and_label_order_does_not_matter() {
        let registry: Registry<metrics::Key, u32> = Registry::new();
        let ab = metrics::Key::from_parts(
            "m",
            vec![metrics::Label::new("a", "1"), metrics::Label::new("b", "2")],
        );
        let ba = metrics::Key::from_parts(
            "m",
            vec![metrics::Label::new("b", "2"), metrics::Label::new("a", "1")],
        );
        let other = metrics::Key::from_parts(
            "m",
            vec![metrics::Label::new("a", "2"), metrics::Label::new("b", "1")],
        );
        assert!(registry.get(&ab).is_none());
        let (first, inserted) = registry.insert(ab.clone(), Arc::new(1));
        assert!(inserted);
        assert_eq!(
            registry.insert(ba.clone(), Arc::new(2)),
            (Arc::clone(&first), false)
        );
        assert!(Arc::ptr_eq(&registry.get(&ba).unwrap(), &first));
        assert_eq!(*registry.insert(other.clone(), Arc::new(3)).0, 3);
        assert_eq!(registry.len(), 2);
        assert_eq!(registry.remove(&ab, &first), Removal::Removed);
        assert_eq!(registry.remove(&ab, &first), Removal::Absent);
        assert!(registry.get(&ab).is_none());
        assert_eq!(registry.get(&other).as_deref(), Some(&3));
    }

    #[test]
    fn a_removal_readers_outlast_puts_the_entry_back() {
        let registry: Registry<metrics::Key, u32> = Registry::new();
        let key = metrics::Key::from_name("m");
        let (series, _) = registry.insert(key.clone(), Arc::new(1));
        // A reader stuck between loading the shard and cloning the series.
        let hash = key.hash64();
        let stuck = registry.shard(hash).table.load_full();
        assert_eq!(registry.remove(&key, &series), Removal::Busy);
        assert!(Arc::ptr_eq(&registry.get(&key).unwrap(), &series));
        drop(stuck);
        assert_eq!(registry.remove(&key, &series), Removal::Removed);
        assert!(registry.get(&key).is_none());
    }
}
