//! One scrape of a Prometheus endpoint, as samples: the text format (0.0.4
//! and OpenMetrics) parsed line by line, or the protobuf format decoded,
//! which alone carries native histograms.

use std::collections::BTreeMap;

use nemo_lens::prometheus::proto::{self, MetricFamily};
use prost::Message;

/// Labels of a sample, sorted by name.
pub type Labels = BTreeMap<String, String>;

/// A native histogram's buckets, as Prometheus's protobuf carries them
/// (base-2 exponential at `schema`).
#[derive(Debug, Clone, PartialEq)]
pub struct Native {
    /// Buckets are `2^(2^-schema)` wide.
    pub schema: i32,
    /// Observations within the zero bucket.
    pub zero_count: u64,
    /// Its half-width.
    pub zero_threshold: f64,
    /// Positive buckets by index: bucket `i` holds `(base^(i-1), base^i]`.
    pub positive: BTreeMap<i32, u64>,
    /// Negative buckets by index, as their magnitudes.
    pub negative: BTreeMap<i32, u64>,
}

/// What one series of a family says.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A counter, gauge or untyped sample.
    Number(f64),
    /// A histogram: classic buckets `(upper bound, cumulative count)`,
    /// native buckets if the endpoint sent them, count and sum.
    Histogram {
        /// Classic buckets, by bound, the last `+Inf`.
        buckets: Vec<(f64, f64)>,
        /// Native buckets.
        native: Option<Native>,
        /// Observations.
        count: f64,
        /// Their sum.
        sum: f64,
    },
}

/// One series: its family's name, labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The family (for a histogram, without `_bucket`, `_sum`, `_count`).
    pub family: String,
    /// Its labels (`le` aside).
    pub labels: Labels,
    /// What it holds.
    pub value: Value,
}

/// Everything one scrape held.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exposition {
    /// Every series, in the order read.
    pub series: Vec<Series>,
}

impl Exposition {
    /// The series of `family`.
    pub fn family<'a>(&'a self, family: &'a str) -> impl Iterator<Item = &'a Series> + 'a {
        self.series.iter().filter(move |s| s.family == family)
    }

    /// Whether some series belongs to `family`.
    pub fn has(&self, family: &str) -> bool {
        self.series.iter().any(|s| s.family == family)
    }
}

/// Why a body is not an exposition.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// A text line that is neither a comment nor a sample.
    #[error("line {line}: not a Prometheus sample: {text:?}")]
    Text {
        /// Its number, from 1.
        line: usize,
        /// The line, cut to 80 characters.
        text: String,
    },
    /// A protobuf body that does not decode.
    #[error("not a Prometheus protobuf exposition: {0}")]
    Protobuf(String),
}

/// The text format: `# TYPE` lines say which families are histograms (their
/// `_bucket`, `_sum` and `_count` samples become one series each);
/// everything else is a number.
pub fn parse_text(body: &str) -> Result<Exposition, ParseError> {
    let mut histograms: Vec<String> = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    // Where each histogram series is, by family and labels.
    let mut at: BTreeMap<(String, Labels), usize> = BTreeMap::new();
    for (n, line) in body.lines().enumerate() {
        let line = line.trim_end();
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut words = rest.split_whitespace();
            if let (Some(name), Some("histogram" | "gaugehistogram")) = (words.next(), words.next())
            {
                histograms.push(name.to_owned());
            }
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, labels, value)) = sample(line) else {
            return Err(ParseError::Text {
                line: n + 1,
                text: line.chars().take(80).collect(),
            });
        };
        let histogram = histograms.iter().find_map(|family| {
            let suffix = name.strip_prefix(family.as_str())?;
            matches!(suffix, "_bucket" | "_sum" | "_count").then_some((family, suffix))
        });
        let Some((family, suffix)) = histogram else {
            series.push(Series {
                family: name.to_owned(),
                labels,
                value: Value::Number(value),
            });
            continue;
        };
        let mut labels = labels;
        let le = labels.remove("le");
        let key = (family.clone(), labels);
        let index = *at.entry(key.clone()).or_insert_with(|| {
            series.push(Series {
                family: key.0.clone(),
                labels: key.1.clone(),
                value: Value::Histogram {
                    buckets: Vec::new(),
                    native: None,
                    count: 0.0,
                    sum: 0.0,
                },
            });
            series.len() - 1
        });
        let Value::Histogram {
            buckets,
            count,
            sum,
            ..
        } = &mut series[index].value
        else {
            unreachable!("made a histogram above");
        };
        match (suffix, le) {
            ("_bucket", Some(le)) => {
                if let Some(bound) = number(&le) {
                    buckets.push((bound, value));
                }
            }
            ("_sum", _) => *sum = value,
            ("_count", _) => *count = value,
            _ => {}
        }
    }
    for s in &mut series {
        if let Value::Histogram { buckets, .. } = &mut s.value {
            buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    Ok(Exposition { series })
}

/// `name{labels} value [timestamp]`.
fn sample(line: &str) -> Option<(&str, Labels, f64)> {
    let (name, labels, rest) = match line.find('{') {
        Some(open) => {
            let (labels, rest) = labels(&line[open + 1..])?;
            (&line[..open], labels, rest)
        }
        None => {
            let end = line.find(char::is_whitespace)?;
            (&line[..end], Labels::new(), &line[end..])
        }
    };
    let value = number(rest.split_whitespace().next()?)?;
    (!name.is_empty()).then_some((name.trim(), labels, value))
}

/// The labels up to the closing brace, and what follows it.
fn labels(mut text: &str) -> Option<(Labels, &str)> {
    let mut labels = Labels::new();
    loop {
        text = text.trim_start_matches([',', ' ']);
        if let Some(rest) = text.strip_prefix('}') {
            return Some((labels, rest));
        }
        let eq = text.find('=')?;
        let name = text[..eq].trim().to_owned();
        text = text[eq + 1..].trim_start().strip_prefix('"')?;
        let mut value = String::new();
        let mut chars = text.char_indices();
        let end = loop {
            let (i, c) = chars.next()?;
            match c {
                '\\' => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                '"' => break i,
                c => value.push(c),
            }
        };
        labels.insert(name, value);
        text = &text[end + 1..];
    }
}

fn number(text: &str) -> Option<f64> {
    match text {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => text.parse().ok(),
    }
}

/// The protobuf format: length-delimited `MetricFamily` messages.
pub fn parse_protobuf(mut body: &[u8]) -> Result<Exposition, ParseError> {
    let mut series = Vec::new();
    while !body.is_empty() {
        let family = MetricFamily::decode_length_delimited(&mut body)
            .map_err(|e| ParseError::Protobuf(e.to_string()))?;
        for metric in &family.metric {
            let labels = metric
                .label
                .iter()
                .map(|l| (l.name.clone(), l.value.clone()))
                .collect();
            let value = if let Some(h) = &metric.histogram {
                histogram(h)
            } else if let Some(c) = &metric.counter {
                Value::Number(c.value)
            } else if let Some(g) = &metric.gauge {
                Value::Number(g.value)
            } else if let Some(u) = &metric.untyped {
                Value::Number(u.value)
            } else {
                // Summaries: nothing `top` reads.
                continue;
            };
            series.push(Series {
                family: family.name.clone(),
                labels,
                value,
            });
        }
    }
    Ok(Exposition { series })
}

fn histogram(h: &proto::Histogram) -> Value {
    let native = (!h.positive_span.is_empty()
        || !h.negative_span.is_empty()
        || h.zero_count > 0
        || h.bucket.is_empty())
    .then(|| Native {
        schema: h.schema,
        zero_count: h.zero_count,
        zero_threshold: h.zero_threshold,
        positive: expand(&h.positive_span, &h.positive_delta),
        negative: expand(&h.negative_span, &h.negative_delta),
    });
    let mut buckets: Vec<(f64, f64)> = h
        .bucket
        .iter()
        .map(|b| (b.upper_bound, b.cumulative_count as f64))
        .collect();
    if !buckets.is_empty() && buckets.last().is_some_and(|b| b.0.is_finite()) {
        buckets.push((f64::INFINITY, h.sample_count as f64));
    }
    Value::Histogram {
        buckets,
        native,
        count: h.sample_count as f64,
        sum: h.sample_sum,
    }
}

/// Spans and deltas into counts by bucket index.
fn expand(spans: &[proto::BucketSpan], deltas: &[i64]) -> BTreeMap<i32, u64> {
    let mut counts = BTreeMap::new();
    let (mut index, mut count, mut deltas) = (0_i32, 0_i64, deltas.iter());
    for span in spans {
        index += span.offset;
        for _ in 0..span.length {
            count += deltas.next().copied().unwrap_or(0);
            if count > 0 {
                counts.insert(index, count as u64);
            }
            index += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_histograms_gather_their_lines_and_labels_unescape() {
        let body = "# HELP x_seconds Time.\n# TYPE x_seconds histogram\n\
            x_seconds_bucket{model=\"a \\\"b\\\"\",le=\"0.1\"} 1\n\
            x_seconds_bucket{model=\"a \\\"b\\\"\",le=\"+Inf\"} 3\n\
            x_seconds_sum{model=\"a \\\"b\\\"\"} 2.5\n\
            x_seconds_count{model=\"a \\\"b\\\"\"} 3\n\
            # TYPE up gauge\nup 1 1700000000000\n";
        let exposition = parse_text(body).unwrap();
        assert_eq!(exposition.series.len(), 2);
        let h = &exposition.series[0];
        assert_eq!(h.labels["model"], "a \"b\"");
        assert_eq!(
            h.value,
            Value::Histogram {
                buckets: vec![(0.1, 1.0), (f64::INFINITY, 3.0)],
                native: None,
                count: 3.0,
                sum: 2.5,
            }
        );
        assert_eq!(exposition.series[1].value, Value::Number(1.0));
    }

    #[test]
    fn garbage_is_an_error_naming_the_line() {
        let err = parse_text("up 1\n<html>oops</html>\n").unwrap_err();
        assert!(err.to_string().starts_with("line 2:"), "{err}");
    }

    #[test]
    fn native_spans_expand_to_counts() {
        let spans = [
            proto::BucketSpan {
                offset: -1,
                length: 2,
            },
            proto::BucketSpan {
                offset: 3,
                length: 1,
            },
        ];
        // Counts 2, 3, then 1 at index 4.
        let counts = expand(&spans, &[2, 1, -2]);
        assert_eq!(counts, BTreeMap::from([(-1, 2), (0, 3), (4, 1)]));
    }
}
