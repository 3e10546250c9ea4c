//! UCUM units as Grafana panel units.

/// The Grafana unit id of a UCUM unit: `s` and `ms` as Grafana's time units,
/// bytes as IEC sizes, `1` as a fraction, `%` as percent, an annotation such
/// as `{token}` (or `{token}/s`) as a custom suffix, anything else as
/// `short`.
pub fn grafana_unit(unit: &str) -> String {
    let known = match unit {
        "" => "none",
        "ns" => "ns",
        "us" => "µs",
        "ms" => "ms",
        "s" => "s",
        "min" => "m",
        "h" => "h",
        "d" => "d",
        "By" | "B" => "bytes",
        "KiBy" => "kbytes",
        "MiBy" => "mbytes",
        "GiBy" => "gbytes",
        "1" => "percentunit",
        "%" => "percent",
        "Hz" => "hertz",
        "By/s" => "Bps",
        _ => return annotation(unit).unwrap_or_else(|| "short".to_owned()),
    };
    known.to_owned()
}

/// The unit of a per-second rate of a quantity in `unit`.
pub(crate) fn grafana_rate_unit(unit: &str) -> String {
    match unit {
        "" | "1" => "cps".to_owned(),
        "By" | "B" => "Bps".to_owned(),
        _ => annotation(&format!("{unit}/s")).unwrap_or_else(|| "short".to_owned()),
    }
}

/// `{token}` as `suffix: token`, `{token}/s` as `suffix: token/s`.
fn annotation(unit: &str) -> Option<String> {
    let (inner, rest) = unit.strip_prefix('{')?.split_once('}')?;
    Some(format!("suffix: {inner}{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(grafana_unit("s"), "s");
        assert_eq!(grafana_unit("ms"), "ms");
        assert_eq!(grafana_unit(""), "none");
        assert_eq!(grafana_unit("{token}"), "suffix: token");
        assert_eq!(grafana_unit("{token}/s"), "suffix: token/s");
        assert_eq!(grafana_unit("1"), "percentunit");
        assert_eq!(grafana_unit("furlong"), "short");
        assert_eq!(grafana_rate_unit("{request}"), "suffix: request/s");
        assert_eq!(grafana_rate_unit("By"), "Bps");
        assert_eq!(grafana_rate_unit(""), "cps");
    }
}
