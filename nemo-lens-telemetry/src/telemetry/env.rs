//! Reading and parsing environment variables with errors that name the
//! variable, the value and what would have been accepted.

use std::path::PathBuf;
use std::time::Duration;

use nemo_lens_core::OtlpProtocol;

pub use nemo_lens_core::config::{ConfigError, EnvLookup};

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

/// Reads an OTLP protocol name.
pub(super) fn parse_protocol(variable: &str, value: &str) -> Result<OtlpProtocol, ConfigError> {
    match value {
        "grpc" => Ok(OtlpProtocol::Grpc),
        "http/protobuf" => Ok(OtlpProtocol::HttpProtobuf),
        _ => Err(ConfigError::new(variable, value, "grpc or http/protobuf")),
    }
}

/// A file named by a variable, kept with the variable's name so errors
/// about the file can name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedFile {
    /// The variable that named the file.
    pub variable: String,
    /// The file.
    pub path: PathBuf,
}

/// A duration written as a whole number and a unit: `500ms`, `30s`, `15m`,
/// `2h`; `0` alone means none.
pub(super) fn parse_duration(variable: &str, value: &str) -> Result<Duration, ConfigError> {
    const EXPECTED: &str = "a duration such as 30s, 15m or 2h (or 0 for never)";
    let trimmed = value.trim();
    if trimmed == "0" {
        return Ok(Duration::ZERO);
    }
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| ConfigError::new(variable, value, EXPECTED))?;
    let (number, unit) = trimmed.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| ConfigError::new(variable, value, EXPECTED))?;
    let seconds = match unit {
        "ms" => return Ok(Duration::from_millis(number)),
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(ConfigError::new(variable, value, EXPECTED)),
    };
    number
        .checked_mul(seconds)
        .map(Duration::from_secs)
        .ok_or_else(|| ConfigError::new(variable, value, EXPECTED))
}

/// Attribute keys, comma-separated, whose series end after `timeout`:
/// a key list without a timeout would end nothing, silently.
pub(super) fn parse_idle_keys(
    variable: &str,
    value: &str,
    timeout: Option<Duration>,
) -> Result<Vec<String>, ConfigError> {
    let keys: Vec<String> = value
        .split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned)
        .collect();
    if let Some(bad) = keys.iter().find(|k| k.contains(char::is_whitespace)) {
        return Err(ConfigError::new(
            variable,
            value,
            format!("attribute keys separated by commas (`{bad}` holds a space)"),
        ));
    }
    if !keys.is_empty() && timeout.is_none() {
        let timeout = variable.replace("SERIES_IDLE_KEYS", "SERIES_IDLE_TIMEOUT");
        return Err(ConfigError::new(
            variable,
            value,
            format!(
                "attribute keys whose series end when idle, with {timeout} set to how long \
                 (it is unset or 0, so they would never end)"
            ),
        ));
    }
    Ok(keys)
}

/// A positive number of milliseconds: the SDK would silently turn 0 into
/// its own default.
pub(super) fn parse_millis(variable: &str, value: &str) -> Result<Duration, ConfigError> {
    const EXPECTED: &str = "a positive whole number of milliseconds";
    match parse_number::<u64>(variable, value, EXPECTED)? {
        0 => Err(ConfigError::new(variable, value, EXPECTED)),
        ms => Ok(Duration::from_millis(ms)),
    }
}

/// Reads variables under a prefix (`NEMO_LENS_`, or a program's own with a
/// fallback to it) and plain ones, each with the name that held the value.
pub(super) struct Reader<'a> {
    pub(super) env: &'a EnvLookup,
    pub(super) prefix: &'a str,
    pub(super) fallback: Option<&'a str>,
}

impl Reader<'_> {
    /// `{prefix}_{name}`, else `{fallback}_{name}`, with the variable that
    /// held the value so errors name the right one.
    pub(super) fn prefixed(&self, name: &str) -> Option<(String, String)> {
        std::iter::once(self.prefix)
            .chain(self.fallback)
            .map(|p| format!("{p}_{name}"))
            .find_map(|var| self.env.get(&var).map(|v| (var, v)))
    }

    /// The first of `names` that is set, with its name.
    pub(super) fn plain(&self, names: &[&str]) -> Option<(String, String)> {
        names
            .iter()
            .find_map(|var| self.env.get(var).map(|v| ((*var).to_owned(), v)))
    }
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
}
