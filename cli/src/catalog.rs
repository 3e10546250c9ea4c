//! The catalog: every instrument of the sets, as JSON or Markdown.

use serde_json::{json, Value};

use crate::sets::{Instrument, InstrumentSet};

/// Every instrument of `sets`: name, kind, unit, description, buckets,
/// fields, attribute keys and Prometheus names, grouped by set.
pub fn catalog_json(sets: &[InstrumentSet]) -> Value {
    let sets: Vec<Value> = sets
        .iter()
        .map(|set| {
            json!({
                "set": set.title,
                "instruments": set.instruments().iter().map(instrument_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "sets": sets })
}

fn instrument_json(i: &Instrument) -> Value {
    json!({
        "name": i.name,
        "kind": i.kind.as_str(),
        "unit": i.unit,
        "description": i.description,
        "buckets": i.buckets,
        "aggregation": i.aggregation.map(|a| a.as_str()),
        "fields": i.fields,
        "attribute_keys": i.attribute_keys,
        "prometheus": {
            "family": i.prometheus.family,
            "type": i.prometheus.metric_type,
            "samples": i.prometheus.samples,
            "labels": i.prometheus.labels,
        },
    })
}

/// The catalog as Markdown: a table per set.
pub fn catalog_markdown(sets: &[InstrumentSet]) -> String {
    let mut out = String::from("# nemo-lens instruments\n");
    for set in sets {
        out.push_str(&format!(
            "\n## {}\n\n| instrument | kind | unit | description | buckets | fields | attributes | Prometheus samples |\n|---|---|---|---|---|---|---|---|\n",
            set.title
        ));
        for i in set.instruments() {
            let buckets = match i.buckets {
                Some(b) => b
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                None if i.kind == nemo_lens::InstrumentKind::Histogram => "SDK default".to_owned(),
                None => String::new(),
            };
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
                i.name,
                i.kind,
                code(&[i.unit]),
                i.description.replace('|', "\\|"),
                buckets,
                code(&i.fields),
                code(&i.attribute_keys),
                code(
                    &i.prometheus
                        .samples
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                ),
            ));
        }
    }
    out
}

/// Each non-empty item in backticks, comma-separated.
fn code(items: &[&str]) -> String {
    items
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin_sets;

    #[test]
    fn json_lists_every_builtin_instrument_with_its_prometheus_names() {
        let sets = builtin_sets();
        let catalog = catalog_json(&sets);
        let instruments: Vec<&Value> = catalog["sets"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["instruments"].as_array().unwrap())
            .collect();
        let distinct: usize = sets.iter().map(|s| s.instruments().len()).sum();
        assert_eq!(instruments.len(), distinct);
        let generation = instruments
            .iter()
            .find(|i| i["name"] == "rl.generation.duration_ms")
            .unwrap();
        assert_eq!(generation["kind"], "histogram");
        assert_eq!(generation["unit"], "ms");
        assert_eq!(
            generation["prometheus"]["samples"][0],
            "rl_generation_duration_ms_milliseconds_bucket"
        );
        let request = instruments
            .iter()
            .find(|i| i["name"] == "gen_ai.server.request.duration")
            .unwrap();
        assert_eq!(request["buckets"][0], 0.01);
        assert_eq!(request["attribute_keys"][0], "gen_ai.request.model");
    }

    #[test]
    fn markdown_has_a_row_per_instrument() {
        let sets = builtin_sets();
        let md = catalog_markdown(&sets);
        for set in &sets {
            assert!(md.contains(&format!("## {}", set.title)));
            for i in set.instruments() {
                let row = md
                    .lines()
                    .find(|l| l.starts_with(&format!("| `{}` |", i.name)))
                    .unwrap_or_else(|| panic!("no row for {}", i.name));
                assert!(
                    row.contains(&format!("`{}`", i.prometheus.samples[0])),
                    "{row}"
                );
            }
        }
        assert!(md.contains("| `rl.throughput.tokens_per_sec` | gauge | `{token}/s` |"));
    }
}
