//! `--json`: one object per refresh, for scripts. The keys of the contract
//! keep their names and meanings; `replica`, `vocabulary` and `error` are
//! added.

use serde_json::{json, Map, Value};

use super::fleet::Row;
use super::stats::{Percentiles, Stats};

/// The object for `rows` and the row of all replicas.
pub fn object(rows: &[Row], all: &Row, slo: Option<&nemo_lens::slo::Slo>) -> Value {
    let replicas: Vec<Value> = rows
        .iter()
        .map(|row| {
            let mut object = Map::new();
            object.insert("url".into(), json!(row.url));
            object.insert("replica".into(), json!(row.replica));
            object.insert("status".into(), json!(row.status.as_str()));
            object.insert("vocabulary".into(), json!(row.vocabulary));
            object.insert("error".into(), json!(row.error));
            signals(&mut object, &row.interval);
            if let Some(slo) = slo {
                object.insert(
                    "slo".into(),
                    super::slo::json(&super::slo::estimates(slo, &row.interval)),
                );
            }
            Value::Object(object)
        })
        .collect();
    let mut everything = Map::new();
    signals(&mut everything, &all.interval);
    if let Some(slo) = slo {
        everything.insert(
            "slo".into(),
            super::slo::json(&super::slo::estimates(slo, &all.interval)),
        );
    }
    json!({ "replicas": replicas, "all": everything })
}

fn signals(object: &mut Map<String, Value>, stats: &Stats) {
    object.insert("running".into(), json!(stats.running));
    object.insert("waiting".into(), json!(stats.waiting));
    object.insert("kv_cache_usage".into(), json!(stats.kv_cache_usage));
    object.insert("requests_per_s".into(), json!(stats.requests_per_s));
    object.insert("input_tokens_per_s".into(), json!(stats.input_tokens_per_s));
    object.insert(
        "output_tokens_per_s".into(),
        json!(stats.output_tokens_per_s),
    );
    object.insert("error_rate".into(), json!(stats.error_rate));
    object.insert("goodput".into(), json!(stats.goodput));
    object.insert(
        "ttft_s".into(),
        percentiles(Percentiles::of(stats.ttft.as_ref())),
    );
    object.insert(
        "tpot_s".into(),
        percentiles(Percentiles::of(stats.tpot.as_ref())),
    );
}

fn percentiles(p: Percentiles) -> Value {
    json!({ "p50": p.p50, "p95": p.p95, "p99": p.p99 })
}
