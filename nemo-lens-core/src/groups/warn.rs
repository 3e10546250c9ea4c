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

/// `(trouble, group, key, detail)`: the detail tells apart problems of one
/// key, such as each undeclared attribute.
type Warned = HashSet<(Trouble, String, String, String)>;

static WARNED: Mutex<Option<Warned>> = Mutex::new(None);

/// Whether this is the first time `(trouble, group, key)` happened; the
/// caller warns only then.
pub(crate) fn first(trouble: Trouble, group: &str, key: &str) -> bool {
    first_of(trouble, group, key, "")
}

/// [`first`], for one of several problems of a key (`detail` names which).
pub(crate) fn first_of(trouble: Trouble, group: &str, key: &str, detail: &str) -> bool {
    let mut warned = WARNED.lock().unwrap_or_else(PoisonError::into_inner);
    warned.get_or_insert_with(HashSet::new).insert((
        trouble,
        group.to_owned(),
        key.to_owned(),
        detail.to_owned(),
    ))
}

/// Forgets the warnings of `group`, re-registered.
pub(crate) fn forget_group(group: &str) {
    let mut warned = WARNED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(warned) = warned.as_mut() {
        warned.retain(|(_, g, _, _)| g != group);
    }
}
