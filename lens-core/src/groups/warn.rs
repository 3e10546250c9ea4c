//! One `tracing` warning per problem, per group and key, for the life of the
//! process: recording never fails the caller, but never fails silently
//! either.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

/// What went wrong while recording a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Trouble {
    Unregistered,
    UnknownKey,
    ObservableKey,
    BadValue,
    NegativeCount,
    UndeclaredAttribute,
}

static WARNED: Mutex<Option<HashSet<(Trouble, String, String)>>> = Mutex::new(None);

/// Whether this is the first time `(trouble, group, key)` happened; the
/// caller warns only then.
pub(crate) fn first(trouble: Trouble, group: &str, key: &str) -> bool {
    let mut warned = WARNED.lock().unwrap_or_else(PoisonError::into_inner);
    warned
        .get_or_insert_with(HashSet::new)
        .insert((trouble, group.to_owned(), key.to_owned()))
}

/// Forgets the warnings of `group`, re-registered.
pub(crate) fn forget_group(group: &str) {
    let mut warned = WARNED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(warned) = warned.as_mut() {
        warned.retain(|(_, g, _)| g != group);
    }
}
