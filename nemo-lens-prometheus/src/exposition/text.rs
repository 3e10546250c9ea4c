//! The text exposition format, version 0.0.4, written as the `prometheus`
//! crate's encoder writes it (so scrapes read the same byte for byte), and
//! the OpenMetrics text that differs from it only in its metadata,
//! exemplars and ending (`openmetrics`). Exponential histograms become
//! classic ones at powers of two.

use std::fmt::Write as _;

use super::escape::{escape_into, push_number};
use super::exemplars::by_bucket;
use super::families::{Family, Kind, Sample};
use super::{native, openmetrics};
use nemo_lens_core::exemplar::Exemplar;

/// Which text format [`write`] writes: the two differ only in their
/// metadata lines, exemplars and ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// Text 0.0.4, without exemplars (they would fail the scrape).
    Text,
    /// OpenMetrics 1.0 (`openmetrics`).
    OpenMetrics,
}

/// The families as text.
pub(crate) fn encode(families: &[Family]) -> Vec<u8> {
    write(families, Dialect::Text)
}

/// The families as OpenMetrics text.
pub(crate) fn encode_openmetrics(families: &[Family]) -> Vec<u8> {
    write(families, Dialect::OpenMetrics)
}

/// The families in `dialect`.
fn write(families: &[Family], dialect: Dialect) -> Vec<u8> {
    let mut out = String::with_capacity(estimate(families));
    for family in families {
        if let Some(raw) = &family.raw {
            // Gathered text is 0.0.4; OpenMetrics is written from the
            // families gathered parsed, which have none.
            if dialect == Dialect::Text {
                out.push_str(raw);
            }
            continue;
        }
        let name = &family.name;
        let mut bounds = Bounds::default();
        match dialect {
            Dialect::Text => {
                if !family.help.is_empty() {
                    out.push_str("# HELP ");
                    out.push_str(name);
                    out.push(' ');
                    escape_into(&mut out, &family.help, false);
                    out.push('\n');
                }
                let _ = writeln!(out, "# TYPE {name} {}", family.kind.as_str());
            }
            Dialect::OpenMetrics => openmetrics::metadata(&mut out, family),
        }
        for series in &family.metrics {
            let exemplars = match dialect {
                Dialect::Text => &[][..],
                Dialect::OpenMetrics => &series.exemplars[..],
            };
            match (&series.value, family.kind) {
                (Sample::Number(value), Kind::Counter | Kind::Gauge | Kind::Untyped) => {
                    sample(&mut out, name, "", &series.labels, None, *value, None);
                }
                (
                    Sample::Histogram {
                        count,
                        sum,
                        buckets,
                    },
                    Kind::Histogram,
                ) => {
                    histogram(
                        &mut out,
                        name,
                        &series.labels,
                        (*count, *sum),
                        buckets,
                        (&mut bounds, exemplars),
                    );
                }
                (Sample::Exponential(point), Kind::Histogram) => {
                    let buckets = native::classic(point);
                    histogram(
                        &mut out,
                        name,
                        &series.labels,
                        (point.count, point.sum),
                        &buckets,
                        (&mut bounds, exemplars),
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
                        sample(&mut out, name, "", &labels, None, *value, None);
                    }
                    let labels = &series.labels;
                    sample(&mut out, name, "_sum", labels, None, *sum, None);
                    let count = *count as f64;
                    sample(&mut out, name, "_count", labels, None, count, None);
                }
                // A value of another kind than its family is never made.
                _ => {}
            }
        }
    }
    if dialect == Dialect::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out.into_bytes()
}

/// Roughly the bytes `families` take as text, so the output grows once or
/// not at all rather than doubling its way through megabytes.
fn estimate(families: &[Family]) -> usize {
    families
        .iter()
        .map(|family| {
            family.raw.as_ref().map_or(0, String::len)
                + family
                    .metrics
                    .iter()
                    .map(|series| {
                        let lines = match &series.value {
                            Sample::Number(_) => 1,
                            Sample::Histogram { buckets, .. } => buckets.len() + 3,
                            Sample::Exponential(_) => 16,
                            Sample::Summary { quantiles, .. } => quantiles.len() + 2,
                        };
                        let labels: usize = series
                            .labels
                            .iter()
                            .map(|(k, v)| k.len() + v.len() + 4)
                            .sum();
                        lines * (family.name.len() + labels + 40)
                    })
                    .sum::<usize>()
                + family.help.len()
                + 2 * family.name.len()
                + 32
        })
        .sum()
}

/// The `le` values of a family's bounds, written once: every series of a
/// family has the same bounds, and formatting a float is most of a bucket
/// line's cost.
#[derive(Default)]
struct Bounds(Vec<(Option<u64>, String)>);

impl Bounds {
    fn le(&mut self, at: usize, bound: f64) -> &str {
        let bits = Some(bound.to_bits());
        if at >= self.0.len() {
            self.0.resize(at + 1, (None, String::new()));
        }
        let (cached, text) = &mut self.0[at];
        if *cached != bits {
            *cached = bits;
            text.clear();
            push_number(text, bound);
        }
        text
    }
}

/// A histogram's lines; in OpenMetrics, each bucket with the exemplar that
/// falls in it.
fn histogram(
    out: &mut String,
    name: &str,
    labels: &[(String, String)],
    (count, sum): (u64, f64),
    buckets: &[(f64, u64)],
    (bounds, exemplars): (&mut Bounds, &[Exemplar]),
) {
    let placed = by_bucket(buckets, exemplars);
    let exemplar = |at: usize| placed.get(at).copied().flatten();
    let mut inf_seen = false;
    for (at, (bound, cumulative)) in buckets.iter().enumerate() {
        let le = bounds.le(at, *bound);
        let value = *cumulative as f64;
        sample(out, name, "_bucket", labels, Some(le), value, exemplar(at));
        inf_seen |= bound.is_infinite() && bound.is_sign_positive();
    }
    if !inf_seen {
        let inf = exemplar(buckets.len());
        sample(
            out,
            name,
            "_bucket",
            labels,
            Some("+Inf"),
            count as f64,
            inf,
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
        openmetrics::push_exemplar(out, exemplar);
    }
    out.push('\n');
}
