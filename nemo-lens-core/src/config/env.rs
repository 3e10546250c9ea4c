//! Where configuration comes from ([`EnvLookup`]) and what a value that
//! cannot be used says ([`ConfigError`]): the variable, the value and what
//! it accepts. Read by setup, by the exporters and by the built-in sets
//! that read their own variables.

use std::fmt;
use std::sync::Arc;

/// A source of environment variables: the process environment or, in tests,
/// a map, so configuration can be checked without mutating the process.
#[derive(Clone)]
pub struct EnvLookup(Arc<LookupFn>);

type LookupFn = dyn Fn(&str) -> Option<String> + Send + Sync;

impl EnvLookup {
    /// The process environment. Values that are not valid Unicode count as
    /// absent, since every variable read here holds ASCII.
    pub fn process() -> Self {
        EnvLookup(Arc::new(|key| std::env::var(key).ok()))
    }

    /// Variables served by `lookup`.
    pub fn from_fn(lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        EnvLookup(Arc::new(lookup))
    }

    /// Variables from a fixed list of `(name, value)` pairs.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let map: std::collections::HashMap<String, String> = pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        EnvLookup(Arc::new(move |key| map.get(key).cloned()))
    }

    /// This lookup, with `defaults` for the variables it leaves unset: a
    /// program's own defaults over the process environment. A variable set
    /// to the empty string stays set, so `CUDA_VISIBLE_DEVICES=""` keeps
    /// meaning "no GPUs" rather than taking a default.
    ///
    /// ```
    /// use nemo_lens::EnvLookup;
    ///
    /// let env = EnvLookup::from_pairs([("CUDA_VISIBLE_DEVICES", ""), ("NEMO_LENS_EXPORTER", "otlp")])
    ///     .with_defaults([("NEMO_LENS_ENABLED", "1"), ("NEMO_LENS_EXPORTER", "prometheus")]);
    /// assert_eq!(env.get("NEMO_LENS_ENABLED").as_deref(), Some("1"));
    /// assert_eq!(env.get("NEMO_LENS_EXPORTER").as_deref(), Some("otlp"));
    /// assert_eq!(env.get_raw("CUDA_VISIBLE_DEVICES").as_deref(), Some(""));
    /// ```
    pub fn with_defaults<K: Into<String>, V: Into<String>>(
        self,
        defaults: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let defaults: std::collections::HashMap<String, String> = defaults
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let inner = self.0;
        EnvLookup(Arc::new(move |key| {
            inner(key).or_else(|| defaults.get(key).cloned())
        }))
    }

    /// The value of `key`, with surrounding whitespace removed; empty counts
    /// as unset, as it does for the OpenTelemetry SDKs.
    pub fn get(&self, key: &str) -> Option<String> {
        (self.0)(key)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }
}

impl EnvLookup {
    /// The value of `key` exactly as set, empty included, for the few
    /// variables where empty means something (`CUDA_VISIBLE_DEVICES=""`: no
    /// GPUs).
    pub fn get_raw(&self, key: &str) -> Option<String> {
        (self.0)(key)
    }
}

impl fmt::Debug for EnvLookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EnvLookup(..)")
    }
}

/// A configuration value that could not be used.
///
/// For header variables `value` lists the header names with every value
/// replaced by `<redacted>`: header values usually hold credentials.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value {value:?} for {variable}: expected {expected}")]
pub struct ConfigError {
    /// The environment variable (or builder option) that held the value.
    pub variable: String,
    /// The value as it was given.
    pub value: String,
    /// What the variable accepts.
    pub expected: String,
}

impl ConfigError {
    /// The error for `value` of `variable`, which accepts `expected`.
    pub fn new(
        variable: impl Into<String>,
        value: impl Into<String>,
        expected: impl Into<String>,
    ) -> Self {
        ConfigError {
            variable: variable.into(),
            value: value.into(),
            expected: expected.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_values_count_as_unset() {
        let env = EnvLookup::from_pairs([("A", "  "), ("B", " v ")]);
        assert_eq!(env.get("A"), None);
        assert_eq!(env.get("B").as_deref(), Some("v"));
        assert_eq!(env.get("C"), None);
    }
}

crate::error_debug::debug_as_sentence!(ConfigError);
