//! Shared by the metrics bridge tests: telemetry rendering in-process, and
//! the text exposition parsed into families to compare two exporters.

use crate::process::{exclusive, Exclusive};
use std::collections::{BTreeMap, BTreeSet};

use nemo_lens::prometheus::{Format, PrometheusRenderer};
use nemo_lens::telemetry::PrometheusResourceLabels;
use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions, TelemetryHandle};

pub struct Rendered {
    pub telemetry: TelemetryHandle,
    pub renderer: PrometheusRenderer,
    _turn: Exclusive,
}

impl Rendered {
    pub fn text(&self) -> String {
        let body = self.renderer.render_as(Format::Text).expect("render").body;
        String::from_utf8(body).expect("utf-8")
    }

    pub fn protobuf(&self) -> Vec<u8> {
        self.renderer
            .render_as(Format::Protobuf)
            .expect("render")
            .body
    }
}

/// Telemetry whose Prometheus exposition the test renders, with `extra`
/// configuration variables.
pub fn telemetry(extra: &[(&str, &str)]) -> Rendered {
    let turn = exclusive();
    let (telemetry, renderer) = another_telemetry(extra);
    Rendered {
        telemetry,
        renderer,
        _turn: turn,
    }
}

/// A second telemetry, with its own provider and endpoint, for a test that
/// already holds its turn through [`telemetry`].
pub fn another_telemetry(extra: &[(&str, &str)]) -> (TelemetryHandle, PrometheusRenderer) {
    let mut pairs = vec![("NEMO_LENS_ENABLED", "true")];
    pairs.extend_from_slice(extra);
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs(pairs)).expect("config");
    let (reader, renderer) =
        PrometheusRenderer::new(&PrometheusResourceLabels::None).expect("renderer");
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs::<&str, &str>([]))
        .probe_gpus(false)
        .allow_reinit(true)
        .set_global(false)
        .metric_reader(reader)
        .setup(&config, 0, 1)
        .expect("setup");
    (telemetry, renderer)
}

/// A family of the text exposition.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Family {
    pub kind: String,
    pub help: Option<String>,
    /// `(sample name, labels, value)`, sorted; `le` normalised.
    pub samples: Vec<(String, BTreeMap<String, String>, f64)>,
}

impl Family {
    pub fn label_sets(&self) -> BTreeSet<BTreeMap<String, String>> {
        self.samples
            .iter()
            .map(|(_, labels, _)| {
                let mut labels = labels.clone();
                labels.remove("le");
                labels
            })
            .collect()
    }

    pub fn value(&self, sample: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let wanted: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.samples
            .iter()
            .find(|(name, l, _)| name == sample && *l == wanted)
            .map(|(_, _, v)| *v)
    }
}

fn unescape(value: &str) -> String {
    value
        .replace("\\n", "\n")
        .replace("\\\"", "\"")
        .replace("\\\\", "\\")
}

fn parse_labels(text: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    let mut rest = text;
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq].trim_start_matches(',').trim().to_owned();
        let after = &rest[eq + 2..];
        let mut end = 0;
        let bytes = after.as_bytes();
        while end < bytes.len() {
            if bytes[end] == b'\\' {
                end += 2;
                continue;
            }
            if bytes[end] == b'"' {
                break;
            }
            end += 1;
        }
        let mut value = unescape(&after[..end]);
        if key == "le" || key == "quantile" {
            value = match value.as_str() {
                "+Inf" => "+Inf".to_owned(),
                v => v.parse::<f64>().map(|f| f.to_string()).unwrap_or(value),
            };
        }
        labels.insert(key, value);
        rest = &after[(end + 1).min(after.len())..];
    }
    labels
}

fn parse_value(text: &str) -> f64 {
    match text {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().expect("a number"),
    }
}

/// The families of a text exposition, by name.
pub fn families(text: &str) -> BTreeMap<String, Family> {
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    let mut types: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            families.entry(name.to_owned()).or_default().help = Some(unescape(help));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE line");
            let family = families.entry(name.to_owned()).or_default();
            assert!(family.kind.is_empty(), "two TYPE lines for {name}");
            family.kind = kind.to_owned();
            types.push((name.to_owned(), kind.to_owned()));
        } else if !line.is_empty() && !line.starts_with('#') {
            let (series, value) = line.rsplit_once(' ').expect("a sample line");
            let (sample, labels) = match series.split_once('{') {
                Some((name, labels)) => (name, parse_labels(labels.trim_end_matches('}'))),
                None => (series, BTreeMap::new()),
            };
            let family = types
                .iter()
                .rev()
                .find(|(name, kind)| {
                    sample == name
                        || (matches!(kind.as_str(), "histogram" | "summary")
                            && ["_bucket", "_sum", "_count"]
                                .iter()
                                .any(|s| sample.strip_suffix(s) == Some(name.as_str())))
                })
                .map(|(name, _)| name.clone())
                .unwrap_or_else(|| panic!("sample {sample} outside its family"));
            families.entry(family).or_default().samples.push((
                sample.to_owned(),
                labels,
                parse_value(value),
            ));
        }
    }
    for family in families.values_mut() {
        family
            .samples
            .sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    }
    families
}

/// Every family of `oracle` (metrics-exporter-prometheus) that is a
/// counter, gauge or histogram has the same TYPE, HELP, label sets and
/// values in `bridge`; returns how many were compared.
pub fn assert_same_families(oracle: &str, bridge: &str) -> usize {
    let oracle = families(oracle);
    let bridge = families(bridge);
    let mut compared = 0;
    for (name, expected) in &oracle {
        if !matches!(expected.kind.as_str(), "counter" | "gauge" | "histogram") {
            continue;
        }
        let Some(actual) = bridge.get(name) else {
            panic!(
                "family {name} missing from the bridge's exposition; it has {:?}",
                bridge.keys()
            );
        };
        assert_eq!(actual.kind, expected.kind, "TYPE of {name}");
        assert_eq!(actual.help, expected.help, "HELP of {name}");
        assert_eq!(
            actual.label_sets(),
            expected.label_sets(),
            "label sets of {name}"
        );
        assert_eq!(
            actual.samples.len(),
            expected.samples.len(),
            "samples of {name}: {:#?} vs {:#?}",
            actual.samples,
            expected.samples
        );
        for ((an, al, av), (en, el, ev)) in actual.samples.iter().zip(&expected.samples) {
            assert_eq!((an, al), (en, el), "sample of {name}");
            let close = (av - ev).abs() <= 1e-9 * ev.abs().max(1.0);
            assert!(close, "{an}{al:?}: bridge {av}, exporter {ev}");
        }
        compared += 1;
    }
    compared
}
