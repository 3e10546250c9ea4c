//! The rules an instrument declaration follows, whoever declares it: the
//! derive at compile time (spanned on the offending token) and runtime metric
//! groups at registration. One implementation, so a spec file and a derived
//! struct are held to exactly the same rules; each caller only adds how to
//! fix the problem in its own syntax.

use crate::{metric_name, sanitize_name, unit_suffix, COUNTER_SUFFIX};

/// Longest instrument name OpenTelemetry allows.
pub const NAME_MAX: usize = 255;
/// Longest unit OpenTelemetry allows.
pub const UNIT_MAX: usize = 63;

/// The problem with an instrument name, if it breaks OpenTelemetry's rule
/// (the SDK would reject it at run time): a full sentence naming the name.
pub fn name_problem(name: &str) -> Option<String> {
    let problem = if name.is_empty() {
        "is empty".to_owned()
    } else if name.len() > NAME_MAX {
        format!("is {} characters long, more than {NAME_MAX}", name.len())
    } else if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        "does not start with an ASCII letter".to_owned()
    } else {
        let bad = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/')))?;
        format!("contains {bad:?}")
    };
    Some(format!(
        "invalid instrument name `{name}`: it {problem}; OpenTelemetry names start with a \
         letter and use at most {NAME_MAX} of A-Z a-z 0-9 _ . - /"
    ))
}

/// The problems with a unit as OpenTelemetry and UCUM see it: too long, not
/// ASCII, or not UCUM (the Prometheus exporter appends a suffix only for
/// UCUM units, so `seconds` is scraped without the `_seconds` dashboards
/// query).
///
/// The unit is UCUM (case-sensitive) when it is empty, or terms joined by
/// `.` (times) and `/` (per), with an optional leading `/`, each term being
///
/// - a number: `1`, `1/s`;
/// - an annotation, printable ASCII in braces, no spaces: `{token}`;
/// - a known UCUM atom with an optional prefix (metric atoms only) and an
///   optional exponent: `s`, `ms`, `By`, `KiBy`, `Cel`, `%`, `m2`, `s-1`;
///   `KBy` (OpenTelemetry's kilobyte, UCUM's is `kBy`) is accepted too;
/// - a number or an atom followed by an annotation (`s{wall}`);
/// - a term in parentheses.
///
/// Anything else is refused. When every wrong term has a known fix the
/// message gives the whole unit rewritten: `seconds` → `s`, `bytes/s` →
/// `By/s`, `percent` → `%`, `ratio` → `1`, a unit in the wrong case (`hz` →
/// `Hz`), and a bare word names what is counted (`tokens/s` → `{token}/s`);
/// otherwise it says what UCUM expects. `B` (`MiB`, `MB`) is UCUM's bel,
/// but the exporter and Python nemo-lens read it as bytes, so it passes;
/// write `By` in new declarations.
pub fn unit_problems(unit: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if unit.len() > UNIT_MAX {
        problems.push(format!(
            "unit `{unit}` is {} characters long; OpenTelemetry allows at most {UNIT_MAX}",
            unit.len()
        ));
    }
    if !unit.is_ascii() {
        problems.push(format!(
            "unit `{unit}` is not ASCII; write UCUM units such as `us` rather than `µs`"
        ));
    } else if let Some(problem) = crate::ucum::problem(unit) {
        problems.push(problem);
    }
    problems
}

/// The problem with a gauge of `unit`, if the unit is a duration: nemo-lens's
/// rule that durations belong on histograms.
pub fn duration_on_gauge(unit: &str) -> Option<String> {
    crate::is_duration(unit).then(|| {
        format!(
            "a gauge with duration unit `{unit}`: durations belong on a histogram, a gauge \
             loses the p99"
        )
    })
}

/// The problems with explicit bucket bounds: each as the index of the
/// offending bound and a sentence.
pub fn bucket_problems(bounds: &[f64]) -> Vec<(usize, String)> {
    let mut problems = Vec::new();
    let mut previous: Option<f64> = None;
    for (index, value) in bounds.iter().copied().enumerate() {
        if !value.is_finite() {
            problems.push((index, "bucket bounds must be finite numbers".to_owned()));
        } else if let Some(before) = previous.filter(|before| value <= *before) {
            problems.push((
                index,
                format!("bucket bounds must be strictly increasing, but {value} follows {before}"),
            ));
        }
        previous = Some(value);
    }
    problems
}

/// The metric family name the Prometheus exporter gives an instrument:
/// [`metric_name`], with [`COUNTER_SUFFIX`] for a counter whose name does
/// not end in it already. Python's exporter (through `prometheus_client`,
/// which strips a trailing `_total` and adds it back) and the collector's do
/// the same: NeMo-Gym's `gym.http.connection_pool.connect_total` is scraped
/// as `gym_http_connection_pool_connect_total`, while
/// `gym.sandbox.create_retry_total` (unit `1`, `_ratio`) becomes
/// `gym_sandbox_create_retry_total_ratio_total`.
pub fn prometheus_family(name: &str, unit: &str, counter: bool) -> String {
    let family = metric_name(name, unit);
    if counter && !family.ends_with(COUNTER_SUFFIX) {
        family + COUNTER_SUFFIX
    } else {
        family
    }
}

/// A name that spells its unit, which the exporter then appends again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpelledUnit {
    /// The ending of the name that spells the unit (`ms`, `per_sec`).
    pub spelling: String,
    /// The name without it: what to call the instrument instead.
    pub fixed: String,
    /// What the name is scraped as, the unit spelled twice.
    pub scraped: String,
    /// What [`fixed`](Self::fixed) is scraped as.
    pub fixed_scraped: String,
}

/// Whether `name` spells `unit` at its end (`rl.generation.duration_ms`
/// with `ms`, scraped as `rl_generation_duration_ms_milliseconds`). A
/// declaration may keep such a name on purpose (`unit_in_name`); without
/// it, this is an error.
pub fn spelled_unit(name: &str, unit: &str, counter: bool) -> Option<SpelledUnit> {
    let suffix = unit_suffix(unit)?;
    let sanitized = sanitize_name(name).to_ascii_lowercase();
    let spelling = unit_spellings(unit, &suffix)
        .into_iter()
        .find(|s| sanitized.ends_with(&format!("_{s}")))?;
    // Sanitizing maps ASCII one to one, so the spelling is the same length
    // in `name`; `get` keeps a non-ASCII name from splitting a character.
    let fixed = name
        .get(..name.len().saturating_sub(spelling.len() + 1))
        .unwrap_or(name)
        .to_owned();
    Some(SpelledUnit {
        scraped: prometheus_family(name, unit, counter),
        fixed_scraped: prometheus_family(&fixed, unit, counter),
        spelling,
        fixed,
    })
}

/// Name endings, in lower case, that spell `unit`: the exporter's own
/// `suffix` and the usual abbreviations (`ms`, `millis`, `sec`, `per_sec`).
fn unit_spellings(unit: &str, suffix: &str) -> Vec<String> {
    fn words(unit: &str) -> &'static [&'static str] {
        match unit {
            "ns" => &["ns", "nsec", "nanos", "nanosecond", "nanoseconds"],
            "us" => &["us", "usec", "micros", "microsecond", "microseconds"],
            "ms" => &["ms", "msec", "millis", "millisecond", "milliseconds"],
            "s" => &["s", "sec", "secs", "second", "seconds"],
            "min" => &["min", "mins", "minute", "minutes"],
            "h" => &["h", "hr", "hrs", "hour", "hours"],
            "d" => &["d", "day", "days"],
            "By" | "B" => &["by", "byte", "bytes"],
            "KiBy" => &["kib", "kibibytes"],
            "MiBy" => &["mib", "mebibytes"],
            "GiBy" => &["gib", "gibibytes"],
            "TiBy" => &["tib", "tibibytes"],
            "KBy" | "KB" => &["kb", "kilobytes"],
            "MBy" | "MB" => &["mb", "megabytes"],
            "GBy" | "GB" => &["gb", "gigabytes"],
            "TBy" | "TB" => &["tb", "terabytes"],
            "m" => &["m", "meter", "meters"],
            "V" => &["volt", "volts"],
            "A" => &["amp", "amps", "ampere", "amperes"],
            "J" => &["joule", "joules"],
            "W" => &["watt", "watts"],
            "g" => &["gram", "grams"],
            "Cel" => &["cel", "celsius"],
            "Hz" => &["hz", "hertz"],
            "1" => &["ratio"],
            "%" => &["pct", "percent"],
            _ => &[],
        }
    }
    fn per_words(unit: &str) -> &'static [&'static str] {
        match unit {
            "s" => &["s", "sec", "second"],
            "m" => &["m", "min", "minute"],
            "h" => &["h", "hr", "hour"],
            "d" => &["d", "day"],
            "w" => &["w", "week"],
            "mo" => &["mo", "month"],
            "y" => &["y", "yr", "year"],
            _ => &[],
        }
    }
    let mut spellings = vec![suffix.to_ascii_lowercase()];
    match unit.split_once('/') {
        Some((_, per)) => spellings.extend(per_words(per).iter().map(|w| format!("per_{w}"))),
        None => spellings.extend(words(unit).iter().map(|w| (*w).to_owned())),
    }
    spellings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_gets_total_once() {
        assert_eq!(
            prometheus_family(
                "gym.http.connection_pool.connect_total",
                "{connection}",
                true
            ),
            "gym_http_connection_pool_connect_total"
        );
        assert_eq!(
            prometheus_family("gym.sandbox.create_retry_total", "1", true),
            "gym_sandbox_create_retry_total_ratio_total"
        );
        assert_eq!(
            prometheus_family("app.requests", "{request}", true),
            "app_requests_total"
        );
        assert_eq!(
            prometheus_family("app.requests_total", "", false),
            "app_requests_total"
        );
    }

    #[test]
    fn names_follow_opentelemetry() {
        assert_eq!(name_problem("rl.reward.mean"), None);
        assert!(name_problem("1st").unwrap().contains("does not start"));
        assert!(name_problem("a b").unwrap().contains("contains ' '"));
        assert!(name_problem("").unwrap().contains("is empty"));
    }

    #[test]
    fn spelled_units_are_found_with_the_fix() {
        let spelled = spelled_unit("rl.generation.duration_ms", "ms", false).unwrap();
        assert_eq!(spelled.fixed, "rl.generation.duration");
        assert_eq!(spelled.scraped, "rl_generation_duration_ms_milliseconds");
        assert_eq!(spelled.fixed_scraped, "rl_generation_duration_milliseconds");
        assert_eq!(
            spelled_unit("rl.throughput.tokens_per_sec", "{token}/s", false)
                .unwrap()
                .spelling,
            "per_sec"
        );
        assert_eq!(spelled_unit("rl.setup.duration", "s", false), None);
        assert_eq!(spelled_unit("rl.reward.mean", "", false), None);
    }

    #[test]
    fn buckets_are_finite_and_increasing() {
        assert!(bucket_problems(&[0.1, 1.0]).is_empty());
        let problems = bucket_problems(&[0.1, 0.1, f64::NAN]);
        assert_eq!(problems.len(), 2);
        assert_eq!(problems[0].0, 1);
        assert_eq!(problems[1].0, 2);
    }
}
