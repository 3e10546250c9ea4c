//! How the Prometheus exporter of OpenTelemetry Rust
//! (`opentelemetry-prometheus` 0.33) turns an instrument name and unit into
//! a Prometheus metric name, and an attribute key into a label name.
//!
//! The rules are those of `opentelemetry-prometheus`'s `utils.rs` and
//! `Collector::get_name`, reproduced exactly because that crate keeps them
//! private: the nemo-lens derive needs them at compile time (to show the
//! name a declaration produces) and `Descriptor` at run time. Tests in
//! `nemo-lens-core` compare them with what a live endpoint exports for every
//! built-in instrument, so a change upstream shows up as a failing test.
//!
//! [`rules`] holds the rules a declaration follows (names, UCUM units, buckets,
//! durations not on gauges, units spelled in names), shared by the derive
//! and runtime metric groups so both refuse exactly the same things.
//!
//! This crate has no dependencies, so the proc-macro can use it.

#![warn(missing_docs)]

use std::borrow::Cow;

pub mod rules;
mod ucum;

/// Appended to counter (monotonic sum) names by the exporter.
pub const COUNTER_SUFFIX: &str = "_total";

/// The UCUM units of a duration: a value in one of them belongs on a
/// histogram (a gauge keeps only the last one and loses the p99), and its
/// rates and quantiles are charted as times.
pub const DURATION_UNITS: [&str; 7] = ["ns", "us", "ms", "s", "min", "h", "d"];

/// Whether `unit` is one of [`DURATION_UNITS`].
pub fn is_duration(unit: &str) -> bool {
    DURATION_UNITS.contains(&unit)
}

/// Nanoseconds in one of a duration unit (`ms` is 1,000,000): what the
/// derive divides a `Duration` field by to record it in its instrument's
/// unit. Whole numbers, so `1.5 ms` comes out exactly `1.5`. `None` for a
/// unit outside [`DURATION_UNITS`].
pub fn nanos_per(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return None,
    })
}

/// The series a histogram family `x` is exported as: `x_bucket`, `x_sum`,
/// `x_count`.
pub const HISTOGRAM_SUFFIXES: [&str; 3] = ["_bucket", "_sum", "_count"];

/// Units for which `x/y` is spelled `per_y` alone, as upstream.
const NON_APPLICABLE_ON_PER_UNIT: [&str; 8] = ["1", "d", "h", "min", "s", "ms", "us", "ns"];

/// The metric family name of an instrument: the sanitized name, then `_` and
/// the unit suffix when the unit has one. Counters get [`COUNTER_SUFFIX`] on
/// top of this; histograms are exported as this name plus
/// [`HISTOGRAM_SUFFIXES`].
///
/// ```
/// use nemo_lens_naming::metric_name;
/// assert_eq!(metric_name("rl.generation.duration_ms", "ms"), "rl_generation_duration_ms_milliseconds");
/// assert_eq!(metric_name("rl.throughput.tokens_per_sec", "{token}/s"), "rl_throughput_tokens_per_sec_per_second");
/// assert_eq!(metric_name("gen_ai.client.token.usage", "{token}"), "gen_ai_client_token_usage");
/// ```
pub fn metric_name(name: &str, unit: &str) -> String {
    let name = sanitize_name(name);
    match unit_suffix(unit) {
        Some(suffix) => format!("{name}_{suffix}"),
        None => name.into_owned(),
    }
}

/// The suffix the exporter appends for `unit`, without the leading `_`:
/// `ms` is `milliseconds`, `{token}/s` is `per_second`, `km/s` is
/// `per_second` (only known first parts are spelled), annotations such as
/// `{token}` and unknown units have none.
pub fn unit_suffix(unit: &str) -> Option<Cow<'static, str>> {
    if unit.is_empty() {
        return None;
    }
    if let Some(matched) = prom_unit(unit) {
        return Some(Cow::Borrowed(matched));
    }
    // `foo/bar` becomes `foo_per_bar`, split at the first `/`.
    if let Some((first, second)) = unit.split_once('/') {
        return match (
            NON_APPLICABLE_ON_PER_UNIT.contains(&first),
            prom_unit(first),
            prom_per_unit(second),
        ) {
            (true, _, Some(second)) | (false, None, Some(second)) => {
                Some(Cow::Owned(format!("per_{second}")))
            }
            (false, Some(first), Some(second)) => Some(Cow::Owned(format!("{first}_per_{second}"))),
            _ => None,
        };
    }
    None
}

fn prom_unit(unit: &str) -> Option<&'static str> {
    Some(match unit {
        // Time
        "d" => "days",
        "h" => "hours",
        "min" => "minutes",
        "s" => "seconds",
        "ms" => "milliseconds",
        "us" => "microseconds",
        "ns" => "nanoseconds",
        // Bytes
        "By" => "bytes",
        "KiBy" => "kibibytes",
        "MiBy" => "mebibytes",
        "GiBy" => "gibibytes",
        "TiBy" => "tibibytes",
        "KBy" => "kilobytes",
        "MBy" => "megabytes",
        "GBy" => "gigabytes",
        "TBy" => "terabytes",
        "B" => "bytes",
        "KB" => "kilobytes",
        "MB" => "megabytes",
        "GB" => "gigabytes",
        "TB" => "terabytes",
        // SI
        "m" => "meters",
        "V" => "volts",
        "A" => "amperes",
        "J" => "joules",
        "W" => "watts",
        "g" => "grams",
        // Misc
        "Cel" => "celsius",
        "Hz" => "hertz",
        "1" => "ratio",
        "%" => "percent",
        _ => return None,
    })
}

fn prom_per_unit(unit: &str) -> Option<&'static str> {
    Some(match unit {
        "s" => "second",
        "m" => "minute",
        "h" => "hour",
        "d" => "day",
        "w" => "week",
        "mo" => "month",
        "y" => "year",
        _ => return None,
    })
}

/// The name with every character outside `[A-Za-z0-9_:]` replaced by `_`,
/// and `_` in front of a leading digit.
///
/// Upstream quirk kept on purpose: characters before the first invalid one
/// are kept when they are Unicode alphanumerics (`é`), later ones are
/// replaced unless ASCII. Instrument names are ASCII (the derive checks
/// it), so this only matters for hand-written descriptors.
pub fn sanitize_name(name: &str) -> Cow<'_, str> {
    let mut prefix = "";
    let first_invalid = name.char_indices().find(|(i, c)| {
        if *i == 0 && c.is_ascii_digit() {
            prefix = "_";
            true
        } else {
            !c.is_alphanumeric() && *c != '_' && *c != ':'
        }
    });
    match first_invalid {
        Some((at, _)) => {
            let (valid, rest) = name.split_at(at);
            Cow::Owned(
                prefix
                    .chars()
                    .chain(valid.chars())
                    .chain(rest.chars().map(|c| {
                        if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                            c
                        } else {
                            '_'
                        }
                    }))
                    .collect(),
            )
        }
        None => Cow::Borrowed(name),
    }
}

/// The label name of an attribute key: every character outside
/// `[A-Za-z0-9:]` becomes `_` (`gen_ai.token.type` is `gen_ai_token_type`).
pub fn label_name(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == ':' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // The cases of upstream's own tests, so the copy is checked against them.
    #[test]
    fn sanitizes_like_upstream() {
        let cases = [
            ("nam€_with_3_width_rune", "nam__with_3_width_rune"),
            ("`", "_"),
            (
                r##"! "#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWKYZ[]\^_abcdefghijklmnopqrstuvwkyz{|}~"##,
                "________________0123456789:______ABCDEFGHIJKLMNOPQRSTUVWKYZ_____abcdefghijklmnopqrstuvwkyz____",
            ),
            ("Avalid_23name", "Avalid_23name"),
            ("_Avalid_23name", "_Avalid_23name"),
            ("1valid_23name", "_1valid_23name"),
            ("avalid_23name", "avalid_23name"),
            ("Ava:lid_23name", "Ava:lid_23name"),
            ("a lid_23name", "a_lid_23name"),
            (":leading_colon", ":leading_colon"),
            ("colon:in:the:middle", "colon:in:the:middle"),
            ("", ""),
        ];
        for (input, want) in cases {
            assert_eq!(sanitize_name(input), want, "input: {input}");
        }
    }

    #[test]
    fn unit_suffixes_like_upstream() {
        let cases = [
            ("g", Some("grams")),
            ("test/y", Some("per_year")),
            ("1/y", Some("per_year")),
            ("m/s", Some("meters_per_second")),
            ("{token}/s", Some("per_second")),
            ("ms/s", Some("per_second")),
            ("By/s", Some("bytes_per_second")),
            ("invalid", None),
            ("invalid/invalid", None),
            ("seconds", None),
            ("", None),
            ("{request}", None),
            ("MiB", None),
        ];
        for (unit, want) in cases {
            assert_eq!(unit_suffix(unit).as_deref(), want, "unit: {unit}");
        }
    }

    #[test]
    fn every_duration_unit_has_its_nanoseconds() {
        for unit in DURATION_UNITS {
            assert!(nanos_per(unit).is_some(), "unit: {unit}");
        }
        assert_eq!(nanos_per("ms"), Some(1_000_000));
        assert_eq!(nanos_per("min"), Some(60 * nanos_per("s").unwrap()));
        assert_eq!(nanos_per("d"), Some(24 * nanos_per("h").unwrap()));
        assert_eq!(nanos_per("By"), None);
        assert_eq!(nanos_per("seconds"), None);
    }

    #[test]
    fn names_and_labels() {
        assert_eq!(
            metric_name("gen_ai.server.request.duration", "s"),
            "gen_ai_server_request_duration_seconds"
        );
        assert_eq!(
            metric_name("gym.verify.success_rate", ""),
            "gym_verify_success_rate"
        );
        assert_eq!(
            metric_name("gym.process.cpu.percent", "%"),
            "gym_process_cpu_percent_percent"
        );
        assert_eq!(metric_name("app/queue-depth", "1"), "app_queue_depth_ratio");
        assert_eq!(label_name("gen_ai.token.type"), "gen_ai_token_type");
        assert_eq!(label_name("service.name"), "service_name");
        assert_eq!(label_name("a:b-c"), "a:b_c");
    }
}
