//! The OpenMetrics 1.0 text exposition, which Prometheus asks for first and
//! which carries exemplars: on histogram `_bucket` lines only, each with
//! its timestamp, ended by `# EOF`.
//!
//! It is the text format with OpenMetrics' names: a counter family is named
//! without `_total` (its sample keeps it; a counter whose name lacks it is
//! `unknown`, as is an untyped family), quotes are escaped in HELP, and no
//! `_created` lines are written (Prometheus 2.42 would store each as a
//! series of its own).

use std::fmt::Write as _;
use std::time::UNIX_EPOCH;

use super::exemplars::by_bucket;
use super::families::{Family, Kind, Sample};
use super::native;
use super::text::{escape_into, push_number};
use crate::exemplar::Exemplar;

/// The families as OpenMetrics text.
pub(crate) fn encode(families: &[Family]) -> Vec<u8> {
    let mut out = String::with_capacity(4096);
    for family in families {
        let (name, kind) = match family.kind {
            Kind::Counter => match family.name.strip_suffix("_total") {
                Some(base) => (base, "counter"),
                None => (family.name.as_str(), "unknown"),
            },
            Kind::Gauge => (family.name.as_str(), "gauge"),
            Kind::Histogram => (family.name.as_str(), "histogram"),
            Kind::Summary => (family.name.as_str(), "summary"),
            Kind::Untyped => (family.name.as_str(), "unknown"),
        };
        let _ = writeln!(out, "# TYPE {name} {kind}");
        if !family.help.is_empty() {
            out.push_str("# HELP ");
            out.push_str(name);
            out.push(' ');
            escape_into(&mut out, &family.help, true);
            out.push('\n');
        }
        let sample_name = family.name.as_str();
        for series in &family.metrics {
            match (&series.value, family.kind) {
                (Sample::Number(value), Kind::Counter | Kind::Gauge | Kind::Untyped) => {
                    sample(
                        &mut out,
                        sample_name,
                        "",
                        &series.labels,
                        None,
                        *value,
                        None,
                    );
                }
                (
                    Sample::Histogram {
                        count,
                        sum,
                        buckets,
                    },
                    Kind::Histogram,
                ) => histogram(
                    &mut out,
                    sample_name,
                    &series.labels,
                    (*count, *sum),
                    buckets,
                    &series.exemplars,
                ),
                (Sample::Exponential(point), Kind::Histogram) => histogram(
                    &mut out,
                    sample_name,
                    &series.labels,
                    (point.count, point.sum),
                    &native::classic(point),
                    &series.exemplars,
                ),
                (
                    Sample::Summary {
                        quantiles,
                        sum,
                        count,
                    },
                    Kind::Summary,
                ) => {
                    for (quantile, value) in quantiles {
                        let mut labels = series.labels.clone();
                        labels.push(("quantile".to_owned(), quantile.to_string()));
                        sample(&mut out, sample_name, "", &labels, None, *value, None);
                    }
                    sample(
                        &mut out,
                        sample_name,
                        "_sum",
                        &series.labels,
                        None,
                        *sum,
                        None,
                    );
                    let count = *count as f64;
                    sample(
                        &mut out,
                        sample_name,
                        "_count",
                        &series.labels,
                        None,
                        count,
                        None,
                    );
                }
                _ => {}
            }
        }
    }
    out.push_str("# EOF\n");
    out.into_bytes()
}

fn histogram(
    out: &mut String,
    name: &str,
    labels: &[(String, String)],
    (count, sum): (u64, f64),
    buckets: &[(f64, u64)],
    exemplars: &[Exemplar],
) {
    let bounds: Vec<f64> = buckets.iter().map(|(bound, _)| *bound).collect();
    let placed = by_bucket(&bounds, exemplars);
    let mut le = String::new();
    let mut inf_seen = false;
    for (at, (bound, cumulative)) in buckets.iter().enumerate() {
        le.clear();
        push_number(&mut le, *bound);
        let exemplar = placed.get(at).copied().flatten();
        sample(
            out,
            name,
            "_bucket",
            labels,
            Some(&le),
            *cumulative as f64,
            exemplar,
        );
        inf_seen |= bound.is_infinite() && bound.is_sign_positive();
    }
    if !inf_seen {
        let exemplar = placed.last().copied().flatten();
        sample(
            out,
            name,
            "_bucket",
            labels,
            Some("+Inf"),
            count as f64,
            exemplar,
        );
    }
    sample(out, name, "_sum", labels, None, sum, None);
    sample(out, name, "_count", labels, None, count as f64, None);
}

fn sample(
    out: &mut String,
    name: &str,
    suffix: &str,
    labels: &[(String, String)],
    le: Option<&str>,
    value: f64,
    exemplar: Option<&Exemplar>,
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
    if let Some(exemplar) = exemplar {
        push_exemplar(out, exemplar);
    }
    out.push('\n');
}

/// ` # {trace_id="..",span_id=".."} value timestamp`: 63 characters of
/// labels, within OpenMetrics' 128; the timestamp in seconds to the
/// millisecond Prometheus keeps, always written so a scrape that sees the
/// same exemplar again stores it once.
fn push_exemplar(out: &mut String, exemplar: &Exemplar) {
    out.push_str(" # {");
    if let Some(span) = exemplar.span {
        let (trace_id, span_id) = span.raw();
        let _ = write!(
            out,
            "trace_id=\"{trace_id:032x}\",span_id=\"{span_id:016x}\""
        );
    }
    out.push_str("} ");
    push_number(out, exemplar.value);
    let since = exemplar.time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let _ = write!(out, " {}.{:03}", since.as_secs(), since.subsec_millis());
}
