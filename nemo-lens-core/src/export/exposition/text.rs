//! The text exposition format, version 0.0.4, written as the `prometheus`
//! crate's encoder writes it (so scrapes read the same byte for byte).
//! Exponential histograms become classic ones at powers of two.

use std::fmt::Write as _;

use super::families::{Family, Kind, Sample};
use super::native;

/// The families as text.
pub(crate) fn encode(families: &[Family]) -> Vec<u8> {
    let mut out = String::new();
    for family in families {
        let name = &family.name;
        if !family.help.is_empty() {
            out.push_str("# HELP ");
            out.push_str(name);
            out.push(' ');
            escape_into(&mut out, &family.help, false);
            out.push('\n');
        }
        let _ = writeln!(out, "# TYPE {name} {}", family.kind.as_str());
        for series in &family.metrics {
            match (&series.value, family.kind) {
                (Sample::Number(value), Kind::Counter | Kind::Gauge) => {
                    sample(&mut out, name, "", &series.labels, None, *value);
                }
                (
                    Sample::Histogram {
                        count,
                        sum,
                        buckets,
                    },
                    Kind::Histogram,
                ) => {
                    histogram(&mut out, name, &series.labels, *count, *sum, buckets);
                }
                (Sample::Exponential(point), Kind::Histogram) => {
                    let buckets = native::classic(point);
                    histogram(
                        &mut out,
                        name,
                        &series.labels,
                        point.count,
                        point.sum,
                        &buckets,
                    );
                }
                (
                    Sample::Summary {
                        quantiles,
                        sum,
                        count,
                    },
                    Kind::Summary,
                ) => {
                    for (quantile, value) in quantiles {
                        let q = quantile.to_string();
                        let mut labels = series.labels.clone();
                        labels.push(("quantile".to_owned(), q));
                        sample(&mut out, name, "", &labels, None, *value);
                    }
                    sample(&mut out, name, "_sum", &series.labels, None, *sum);
                    sample(
                        &mut out,
                        name,
                        "_count",
                        &series.labels,
                        None,
                        *count as f64,
                    );
                }
                // A value of another kind than its family is never made.
                _ => {}
            }
        }
    }
    out.into_bytes()
}

fn histogram(
    out: &mut String,
    name: &str,
    labels: &[(String, String)],
    count: u64,
    sum: f64,
    buckets: &[(f64, u64)],
) {
    let mut inf_seen = false;
    for (bound, cumulative) in buckets {
        let le = bound.to_string();
        sample(out, name, "_bucket", labels, Some(&le), *cumulative as f64);
        inf_seen |= bound.is_infinite() && bound.is_sign_positive();
    }
    if !inf_seen {
        sample(out, name, "_bucket", labels, Some("+Inf"), count as f64);
    }
    sample(out, name, "_sum", labels, None, sum);
    sample(out, name, "_count", labels, None, count as f64);
}

fn sample(
    out: &mut String,
    name: &str,
    suffix: &str,
    labels: &[(String, String)],
    le: Option<&str>,
    value: f64,
) {
    out.push_str(name);
    out.push_str(suffix);
    if !labels.is_empty() || le.is_some() {
        let mut separator = '{';
        for (label, value) in labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(le.map(|le| ("le", le)))
        {
            out.push(separator);
            out.push_str(label);
            out.push_str("=\"");
            escape_into(out, value, true);
            out.push('"');
            separator = ',';
        }
        out.push('}');
    }
    out.push(' ');
    push_number(out, value);
    out.push('\n');
}

/// A number as Prometheus writes one: Rust's shortest round-trip form,
/// `+Inf`, `-Inf` and `NaN`.
fn push_number(out: &mut String, value: f64) {
    match value {
        v if v.is_nan() => out.push_str("NaN"),
        v if v.is_infinite() && v > 0.0 => out.push_str("+Inf"),
        v if v.is_infinite() => out.push_str("-Inf"),
        v => {
            let _ = write!(out, "{v}");
        }
    }
}

/// Backslashes and newlines escaped, and double quotes in label values.
fn escape_into(out: &mut String, text: &str, quotes: bool) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if quotes => out.push_str("\\\""),
            c => out.push(c),
        }
    }
}
