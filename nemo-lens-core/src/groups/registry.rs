//! The process-wide registry of groups: registered once, looked up by name
//! when a meter first records a group.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use super::check::{check_into, Problems, Rule, SpecError};
use super::spec::MetricSpec;
use super::warn;

/// A registered group: its specs and where each key is.
pub(crate) struct Group {
    pub(crate) name: String,
    pub(crate) specs: Vec<MetricSpec>,
    index: HashMap<String, usize>,
    /// Set when the group is replaced or unregistered, so meters rebuild
    /// (or drop) the instruments they cached for it.
    retired: AtomicBool,
}

impl Group {
    pub(crate) fn position(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }

    pub(crate) fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }
}

static REGISTRY: RwLock<Option<HashMap<String, Arc<Group>>>> = RwLock::new(None);

pub(crate) fn lookup(group: &str) -> Option<Arc<Group>> {
    let registry = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    registry.as_ref()?.get(group).cloned()
}

/// Registers `specs` as `group`, once: a second registration of the same
/// name is refused (see [`register_metric_group_with_override`]). Every spec
/// is checked with the derive's rules first, and a group that breaks any is
/// refused with all of its problems.
///
/// ```
/// use nemo_lens::groups::{register_metric_group, MetricKind, MetricSpec};
///
/// register_metric_group(
///     "doc_rl",
///     [
///         MetricSpec::new("reward_mean", "rl.reward.mean", MetricKind::Gauge)
///             .description("Mean rollout reward."),
///         MetricSpec::new("step_duration", "rl.step.duration", MetricKind::Gauge)
///             .unit("s")
///             .description("Wall-clock duration of a training step."),
///     ],
/// )
/// .unwrap_err(); // a gauge in seconds: durations belong on histograms
/// ```
pub fn register_metric_group(
    group: &str,
    specs: impl IntoIterator<Item = MetricSpec>,
) -> Result<(), SpecError> {
    register(group, specs.into_iter().collect(), false)
}

/// [`register_metric_group`], replacing a group of the same name: meters
/// build the new definition's instruments the next time they record it.
/// (OpenTelemetry cannot remove an observable instrument, so callbacks of
/// the old definition already installed keep reporting.)
pub fn register_metric_group_with_override(
    group: &str,
    specs: impl IntoIterator<Item = MetricSpec>,
) -> Result<(), SpecError> {
    register(group, specs.into_iter().collect(), true)
}

fn register(group: &str, specs: Vec<MetricSpec>, allow_override: bool) -> Result<(), SpecError> {
    let mut problems = Problems::default();
    check_into(&mut problems, group, &specs);
    let refuse = |problems: Problems| SpecError {
        group: group.to_owned(),
        problems: problems.0,
    };
    if !problems.0.is_empty() {
        return Err(refuse(problems));
    }
    let index = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| (spec.key.clone(), i))
        .collect();
    let entry = Arc::new(Group {
        name: group.to_owned(),
        specs,
        index,
        retired: AtomicBool::new(false),
    });
    {
        let mut registry = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
        let registry = registry.get_or_insert_with(HashMap::new);
        if registry.contains_key(group) && !allow_override {
            problems.push(
                "",
                Rule::AlreadyRegistered,
                format!(
                    "group `{group}` is already registered; register it once, or replace it with \
                     register_metric_group_with_override"
                ),
            );
            return Err(refuse(problems));
        }
        if let Some(old) = registry.insert(group.to_owned(), entry) {
            old.retired.store(true, Ordering::Release);
        }
    }
    // A new definition may have new keys: its problems deserve new warnings.
    warn::forget_group(group);
    Ok(())
}

/// Removes `group`; `false` if it was not registered. Meters drop its
/// instruments the next time they are asked to record it.
pub fn unregister_metric_group(group: &str) -> bool {
    let mut registry = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    match registry.as_mut().and_then(|r| r.remove(group)) {
        Some(old) => {
            old.retired.store(true, Ordering::Release);
            true
        }
        None => false,
    }
}

/// Every registered group and its specs, sorted by group name.
pub fn registered_metric_groups() -> Vec<(String, Vec<MetricSpec>)> {
    let registry = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    let mut groups: Vec<(String, Vec<MetricSpec>)> = registry
        .iter()
        .flatten()
        .map(|(name, group)| (name.clone(), group.specs.clone()))
        .collect();
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    groups
}
