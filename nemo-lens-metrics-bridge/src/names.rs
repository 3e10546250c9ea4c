//! Names as `metrics-exporter-prometheus` writes them, and units as UCUM
//! for OTLP.

/// `[a-zA-Z_:][a-zA-Z0-9_:]*`, every other character `_`, as
/// `metrics-exporter-prometheus` sanitizes metric names.
pub(crate) fn sanitize_metric_name(name: &str) -> String {
    name.chars()
        .enumerate()
        .map(|(i, c)| {
            let valid =
                c.is_ascii_alphabetic() || c == '_' || c == ':' || (i > 0 && c.is_ascii_digit());
            if valid {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `[a-zA-Z_][a-zA-Z0-9_]*`, every other character `_`, as
/// `metrics-exporter-prometheus` sanitizes label names.
pub(crate) fn sanitize_label_key(key: &str) -> String {
    key.chars()
        .enumerate()
        .map(|(i, c)| {
            let valid = c.is_ascii_alphabetic() || c == '_' || (i > 0 && c.is_ascii_digit());
            if valid {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The UCUM unit OTLP carries for a facade unit (`metrics::Unit::as_str`).
pub(crate) fn ucum(unit: &str) -> Option<&'static str> {
    Some(match unit {
        "count" => "1",
        "percent" => "%",
        "seconds" => "s",
        "milliseconds" => "ms",
        "microseconds" => "us",
        "nanoseconds" => "ns",
        "tebibytes" => "TiBy",
        "gibibytes" => "GiBy",
        "mebibytes" => "MiBy",
        "kibibytes" => "KiBy",
        "bytes" => "By",
        "terabits_per_second" => "Tbit/s",
        "gigabits_per_second" => "Gbit/s",
        "megabits_per_second" => "Mbit/s",
        "kilobits_per_second" => "kbit/s",
        "bits_per_second" => "bit/s",
        "count_per_second" => "1/s",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized_like_the_exporter() {
        assert_eq!(
            sanitize_metric_name("smg_http_requests_total"),
            "smg_http_requests_total"
        );
        assert_eq!(sanitize_metric_name("job:rate:5m"), "job:rate:5m");
        assert_eq!(sanitize_metric_name("9a.b-c μs"), "_a_b_c__s");
        assert_eq!(sanitize_label_key("a:b"), "a_b");
        assert_eq!(sanitize_label_key("0x"), "_x");
    }

    #[test]
    fn every_unit_has_a_ucum_form() {
        let all = [
            metrics::Unit::Count,
            metrics::Unit::Percent,
            metrics::Unit::Seconds,
            metrics::Unit::Milliseconds,
            metrics::Unit::Microseconds,
            metrics::Unit::Nanoseconds,
            metrics::Unit::Tebibytes,
            metrics::Unit::Gibibytes,
            metrics::Unit::Mebibytes,
            metrics::Unit::Kibibytes,
            metrics::Unit::Bytes,
            metrics::Unit::TerabitsPerSecond,
            metrics::Unit::GigabitsPerSecond,
            metrics::Unit::MegabitsPerSecond,
            metrics::Unit::KilobitsPerSecond,
            metrics::Unit::BitsPerSecond,
            metrics::Unit::CountPerSecond,
        ];
        for unit in all {
            let ucum = ucum(unit.as_str()).unwrap_or_else(|| panic!("{unit:?}"));
            assert!(ucum.is_ascii(), "{unit:?}");
        }
        assert_eq!(ucum(metrics::Unit::Microseconds.as_str()), Some("us"));
    }
}
