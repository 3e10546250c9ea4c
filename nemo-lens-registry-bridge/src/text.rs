//! Reads the Prometheus text format (0.0.4) as `prometheus-client`'s
//! encoder writes it back into families: `# HELP` then `# TYPE`, then the
//! family's samples; label values escaped with `\\`, `\"` and `\n`; each
//! histogram series as its `_bucket` lines, then `_sum` and `_count`.

use std::borrow::Cow;

use nemo_lens_core::owned::{GatheredFamily, GatheredKind, GatheredSeries, GatheredValue};

/// A sample's labels as they stand in the text, unescaped only where they
/// had an escape: a histogram repeats them on every line, and only the
/// first line of a series needs them owned.
type Labels<'a> = Vec<(&'a str, Cow<'a, str>)>;

fn owned(labels: Labels<'_>) -> Vec<(String, String)> {
    labels
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value.into_owned()))
        .collect()
}

/// The families of `text`. A line that is not a comment, a `TYPE`d
/// family's sample or well formed is skipped.
pub(crate) fn parse(text: &str) -> Vec<GatheredFamily> {
    let mut families: Vec<GatheredFamily> = Vec::new();
    let mut help: Option<(&str, String)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, text) = rest.split_once(' ').unwrap_or((rest, ""));
            help = Some((name, unescape_help(text)));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let Some((name, kind)) = rest.split_once(' ') else {
                continue;
            };
            let kind = GatheredKind::from_type(kind);
            let help = match help.take() {
                Some((described, text)) if described == name => text,
                _ => String::new(),
            };
            families.push(GatheredFamily {
                name: name.to_owned(),
                help,
                unit: String::new(),
                kind,
                series: Vec::new(),
            });
        } else if !line.starts_with('#')
            && !line.is_empty()
            && let (Some(family), Some(sample)) = (families.last_mut(), sample(line))
        {
            add(family, sample);
        }
    }
    families
}

struct Sample<'a> {
    name: &'a str,
    labels: Labels<'a>,
    value: f64,
}

/// Adds `sample` to `family`, whose name it must carry (with a histogram's
/// or summary's suffix).
fn add(family: &mut GatheredFamily, mut sample: Sample<'_>) {
    let Some(suffix) = sample.name.strip_prefix(family.name.as_str()) else {
        return;
    };
    match (family.kind, suffix) {
        (GatheredKind::Counter | GatheredKind::Gauge | GatheredKind::Untyped, "") => {
            family.series.push(GatheredSeries::new(
                owned(sample.labels),
                GatheredValue::Number(sample.value),
            ))
        }
        (GatheredKind::Histogram, "_bucket") => {
            let Some(at) = sample.labels.iter().position(|(name, _)| *name == "le") else {
                return;
            };
            let (_, le) = sample.labels.remove(at);
            let Ok(bound) = parse_float(&le) else {
                return;
            };
            let GatheredValue::Histogram { buckets, .. } = series(family, sample.labels) else {
                return;
            };
            if bound != f64::INFINITY {
                buckets.push((bound, sample.value as u64));
            }
        }
        (GatheredKind::Histogram, "_sum") => {
            if let GatheredValue::Histogram { sum, .. } = series(family, sample.labels) {
                *sum = sample.value;
            }
        }
        (GatheredKind::Histogram, "_count") => {
            if let GatheredValue::Histogram { count, .. } = series(family, sample.labels) {
                *count = sample.value as u64;
            }
        }
        (GatheredKind::Summary, "") => {
            let Some(at) = sample
                .labels
                .iter()
                .position(|(name, _)| *name == "quantile")
            else {
                return;
            };
            let (_, quantile) = sample.labels.remove(at);
            let Ok(quantile) = parse_float(&quantile) else {
                return;
            };
            if let GatheredValue::Summary { quantiles, .. } = series(family, sample.labels) {
                quantiles.push((quantile, sample.value));
            }
        }
        (GatheredKind::Summary, "_sum") => {
            if let GatheredValue::Summary { sum, .. } = series(family, sample.labels) {
                *sum = sample.value;
            }
        }
        (GatheredKind::Summary, "_count") => {
            if let GatheredValue::Summary { count, .. } = series(family, sample.labels) {
                *count = sample.value as u64;
            }
        }
        _ => {}
    }
}

/// The value of `family`'s series with `labels`: the last series, or a new
/// empty one. The encoder writes each series' lines together, so a label
/// set unlike the last one's starts a series (looking further back would
/// make a scrape quadratic in the series of a family).
fn series<'f>(family: &'f mut GatheredFamily, labels: Labels<'_>) -> &'f mut GatheredValue {
    let continues = family.series.last().is_some_and(|series| {
        series.labels.len() == labels.len()
            && series
                .labels
                .iter()
                .zip(&labels)
                .all(|((name, value), (n, v))| name == n && value == v)
    });
    if !continues {
        let empty = match family.kind {
            GatheredKind::Summary => GatheredValue::Summary {
                quantiles: Vec::new(),
                sum: 0.0,
                count: 0,
            },
            _ => GatheredValue::Histogram {
                count: 0,
                sum: 0.0,
                buckets: Vec::new(),
            },
        };
        family
            .series
            .push(GatheredSeries::new(owned(labels), empty));
    }
    let last = family.series.len() - 1;
    &mut family.series[last].value
}

/// One sample line: `name{label="value",...} value [timestamp]`.
fn sample(line: &str) -> Option<Sample<'_>> {
    let name_end = line.find(['{', ' '])?;
    let name = &line[..name_end];
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(after) = rest.strip_prefix('{') {
        rest = after;
        loop {
            rest = rest.trim_start_matches(',');
            if let Some(after) = rest.strip_prefix('}') {
                rest = after;
                break;
            }
            let (key, after) = rest.split_once("=\"")?;
            let (value, after) = quoted(after)?;
            labels.push((key, value));
            rest = after;
        }
    }
    let value = rest.split_whitespace().next()?;
    Some(Sample {
        name,
        labels,
        value: parse_float(value).ok()?,
    })
}

/// A label value up to its closing quote, unescaped, and what follows it.
fn quoted(text: &str) -> Option<(Cow<'_, str>, &str)> {
    // Most values have no escape: borrowed up to the quote.
    let end = text.find(['"', '\\'])?;
    if text.as_bytes()[end] == b'"' {
        return Some((Cow::Borrowed(&text[..end]), &text[end + 1..]));
    }
    let mut value = String::with_capacity(text.len().min(64));
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Some((Cow::Owned(value), &text[at + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => value.push('\n'),
                other => value.push(other),
            },
            c => value.push(c),
        }
    }
    None
}

/// HELP text with `\\` and `\n` undone.
fn unescape_help(text: &str) -> String {
    if !text.contains('\\') {
        return text.to_owned();
    }
    let mut help = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some('n')) => {
                help.push('\n');
                chars.next();
            }
            ('\\', Some('\\')) => {
                help.push('\\');
                chars.next();
            }
            (c, _) => help.push(c),
        }
    }
    help
}

/// A value as the format writes it, `+Inf`, `-Inf` and `NaN` included.
fn parse_float(text: &str) -> Result<f64, std::num::ParseFloatError> {
    text.parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_with_escapes() {
        let text = "# HELP requests_total Requests \\\\ by \\n route.\n\
                    # TYPE requests_total counter\n\
                    requests_total{route=\"/a\\\"b\\\\c\\nd\",code=\"200\"} 3\n\
                    requests_total 1.5\n\
                    # HELP latency_seconds Latency.\n\
                    # TYPE latency_seconds histogram\n\
                    latency_seconds_bucket{model=\"m\",le=\"0.5\"} 1\n\
                    latency_seconds_bucket{model=\"m\",le=\"+Inf\"} 3\n\
                    latency_seconds_sum{model=\"m\"} 4.25\n\
                    latency_seconds_count{model=\"m\"} 3\n\
                    # HELP x Unknown.\n\
                    # TYPE x untyped\n\
                    x NaN\n";
        let families = parse(text);
        assert_eq!(families.len(), 3);
        assert_eq!(families[0].help, "Requests \\ by \n route.");
        assert_eq!(
            families[0].series[0].labels,
            vec![
                ("route".to_owned(), "/a\"b\\c\nd".to_owned()),
                ("code".to_owned(), "200".to_owned())
            ]
        );
        assert_eq!(families[0].series[1].value, GatheredValue::Number(1.5));
        assert_eq!(
            families[1].series[0].value,
            GatheredValue::Histogram {
                count: 3,
                sum: 4.25,
                buckets: vec![(0.5, 1)]
            }
        );
        assert_eq!(families[2].kind, GatheredKind::Untyped);
        assert!(matches!(families[2].series[0].value, GatheredValue::Number(v) if v.is_nan()));
    }

    #[test]
    fn malformed_lines_are_skipped() {
        let text = "# TYPE a gauge\na{x=\"unterminated} 1\na 2\nb 3\n";
        let families = parse(text);
        assert_eq!(families[0].series.len(), 1);
        assert_eq!(families[0].series[0].value, GatheredValue::Number(2.0));
    }
}
