//! Reading and parsing environment variables with errors that name the
//! variable, the value and what would have been accepted.

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

const BOOL_EXPECTED: &str = "one of 1, 0, true, false, yes, no, on, off";

/// Parses the boolean spellings nemo-lens accepts, case-insensitively.
pub(crate) fn parse_bool(variable: &str, value: &str) -> Result<bool, ConfigError> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::new(variable, value, BOOL_EXPECTED)),
    }
}

/// Parses a number of type `T`, naming the variable on failure.
pub(crate) fn parse_number<T: std::str::FromStr>(
    variable: &str,
    value: &str,
    expected: &str,
) -> Result<T, ConfigError> {
    value
        .parse()
        .map_err(|_| ConfigError::new(variable, value, expected))
}

/// Parses a probability in `0..=1`.
pub(crate) fn parse_rate(variable: &str, value: &str) -> Result<f64, ConfigError> {
    const EXPECTED: &str = "a number between 0 and 1 inclusive";
    let rate: f64 = parse_number(variable, value, EXPECTED)?;
    if (0.0..=1.0).contains(&rate) {
        Ok(rate)
    } else {
        Err(ConfigError::new(variable, value, EXPECTED))
    }
}

/// Parses the W3C-baggage-style `key=value,key2=value2` lists used by
/// `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_EXPORTER_OTLP_HEADERS`, with
/// percent-decoding of keys and values.
pub(crate) fn parse_key_values(
    variable: &str,
    value: &str,
) -> Result<Vec<(String, String)>, ConfigError> {
    const EXPECTED: &str = "a comma-separated list of key=value pairs";
    let mut pairs = Vec::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(ConfigError::new(variable, value, EXPECTED));
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() {
            return Err(ConfigError::new(variable, value, EXPECTED));
        }
        let decode = |s: &str| {
            percent_decode(s).ok_or_else(|| {
                ConfigError::new(variable, value, "percent-encoded UTF-8 in key=value pairs")
            })
        };
        pairs.push((decode(k)?, decode(v)?));
    }
    Ok(pairs)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_accept_every_documented_spelling() {
        for yes in ["1", "true", "TRUE", "yes", "On"] {
            assert_eq!(parse_bool("X", yes), Ok(true), "{yes}");
        }
        for no in ["0", "false", "No", "OFF"] {
            assert_eq!(parse_bool("X", no), Ok(false), "{no}");
        }
        let err = parse_bool("NEMO_LENS_ENABLED", "maybe").unwrap_err();
        assert_eq!(err.variable, "NEMO_LENS_ENABLED");
        assert_eq!(err.value, "maybe");
        assert!(err.to_string().contains("yes, no, on, off"), "{err}");
    }

    #[test]
    fn rates_outside_the_unit_interval_are_errors() {
        assert_eq!(parse_rate("R", "0"), Ok(0.0));
        assert_eq!(parse_rate("R", "1"), Ok(1.0));
        assert_eq!(parse_rate("R", "0.25"), Ok(0.25));
        for bad in ["1.5", "-0.1", "NaN", "half"] {
            let err = parse_rate("R", bad).unwrap_err();
            assert_eq!((err.variable.as_str(), err.value.as_str()), ("R", bad));
        }
    }

    #[test]
    fn key_values_are_split_trimmed_and_decoded() {
        let pairs = parse_key_values("H", "a=1, b = x%20y ,c=").unwrap();
        assert_eq!(
            pairs,
            vec![
                ("a".into(), "1".into()),
                ("b".into(), "x y".into()),
                ("c".into(), String::new())
            ]
        );
        assert!(parse_key_values("H", "novalue").is_err());
        assert!(parse_key_values("H", "=v").is_err());
        assert!(parse_key_values("H", "k=%zz").is_err());
    }

    #[test]
    fn empty_values_count_as_unset() {
        let env = EnvLookup::from_pairs([("A", "  "), ("B", " v ")]);
        assert_eq!(env.get("A"), None);
        assert_eq!(env.get("B").as_deref(), Some("v"));
        assert_eq!(env.get("C"), None);
    }
}

crate::error_debug::debug_as_sentence!(ConfigError);
