//! The catalog: every instrument of the sets, as JSON or Markdown.

use serde_json::{json, Value};

use crate::sets::{Instrument, InstrumentSet};

/// Every instrument of `sets`: name, kind, unit, description, buckets,
/// fields, attributes (with their values when fixed), the most series it
/// can have (`null` when an attribute is free-form) and Prometheus names,
/// grouped by set.
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
        "attributes": i.attributes.iter().map(|a| json!({ "key": a.key, "values": a.values })).collect::<Vec<_>>(),
        "max_series": i.max_series,
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
                attributes(&i),
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

/// Each attribute key, with its values when fixed, then the most series
/// when every attribute is fixed: "`outcome` (`success`, `failure`); at
/// most 3 series".
fn attributes(i: &Instrument) -> String {
    let mut cell = i
        .attributes
        .iter()
        .map(|a| match &a.values {
            Some(values) => {
                let values: Vec<String> = values.iter().map(|v| value_code(v)).collect();
                format!("{} ({})", code(&[a.key]), values.join(", "))
            }
            None => code(&[a.key]),
        })
        .collect::<Vec<_>>()
        .join(", ");
    // Without attributes an instrument has one series, which goes unsaid.
    if let (Some(series), false) = (i.max_series, i.attributes.is_empty()) {
        cell.push_str(&format!("; at most {series} series"));
    }
    cell
}

/// An attribute value in backticks: an empty one (a default) is a value
/// here, shown as `""`, and a `|` would end the table cell.
fn value_code(value: &str) -> String {
    if value.is_empty() {
        "`\"\"`".to_owned()
    } else {
        format!("`{}`", value.replace('|', "\\|"))
    }
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
        let keys: Vec<&Value> = request["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| &a["key"])
            .collect();
        assert_eq!(
            keys,
            request["attribute_keys"]
                .as_array()
                .unwrap()
                .iter()
                .collect::<Vec<_>>()
        );
        let operation = request["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == "gen_ai.operation.name")
            .unwrap();
        assert_eq!(operation["values"], Value::Null, "free-form");
        assert_eq!(request["max_series"], Value::Null);

        let finished = instruments
            .iter()
            .find(|i| i["name"] == "nemo.inference.requests.finished")
            .unwrap();
        assert_eq!(
            finished["attributes"],
            json!([{
                "key": "nemo.inference.finish_reason",
                "values": ["stop", "length", "abort", "error"],
            }])
        );
        // Each reason, or none set.
        assert_eq!(finished["max_series"], 5);
        let tokens = instruments
            .iter()
            .find(|i| i["name"] == "gen_ai.client.token.usage")
            .unwrap();
        let token_type = tokens["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == "gen_ai.token.type")
            .unwrap();
        assert_eq!(token_type["values"], json!(["input", "output"]));
    }

    #[test]
    fn json_lists_a_default_among_the_values() {
        let sets = crate::builtin_sets_for(&nemo_lens::SemconvOptIn::parse(
            "gen_ai_latest_experimental",
        ));
        let catalog = catalog_json(&sets);
        let input = catalog["sets"][0]["instruments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == "gen_ai.client.inference.usage.input_tokens")
            .unwrap();
        let modality = input["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == "gen_ai.token.modality")
            .unwrap();
        assert_eq!(
            modality["values"],
            json!(["text", "image", "audio", "unknown"])
        );
    }

    #[test]
    fn markdown_has_a_row_per_instrument() {
        let sets: Vec<_> = builtin_sets()
            .into_iter()
            .chain(crate::unreleased_sets())
            .collect();
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
        assert!(
            md.contains(
                "| `completed` | `nemo.gym.rollout.outcome` (`success`, `failure`); at most 3 series |"
            ),
            "{md}"
        );
        assert!(md.contains(
            "`gen_ai.token.type` (`input`, `output`) | `gen_ai_client_token_usage_bucket`"
        ));
    }

    #[test]
    fn markdown_shows_an_empty_value_and_escapes_a_pipe() {
        assert_eq!(value_code(""), "`\"\"`");
        assert_eq!(value_code("a|b"), "`a\\|b`");
    }
}
