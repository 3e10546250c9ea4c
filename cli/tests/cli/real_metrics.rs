//! `nemo-lens top` on real servers' `/metrics`: the captures other people
//! took from running vLLM, Dynamo, SGLang, TensorRT-LLM, llama.cpp, TEI and
//! Triton servers, read from `../shared/real-metrics/` (never copied here;
//! `SOURCES.md` there gives their origin). Where that folder is absent the
//! tests say so and check nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nemo_lens_cli::top::exposition::parse_text;
use nemo_lens_cli::top::fetch::Outcome;
use nemo_lens_cli::top::stats::Percentiles;
use nemo_lens_cli::top::Fleet;

use crate::top::serve;

/// The captures' folder, or `None` (said on stderr) where it is absent.
fn captures() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/real-metrics");
    if dir.join("SOURCES.md").is_file() {
        return Some(dir);
    }
    eprintln!(
        "SKIPPED: {} is absent, so the real servers' captures were not read \
         (CI has them; see the issue that added this test)",
        dir.display()
    );
    None
}

fn read(dir: &std::path::Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

const FILES: [&str; 14] = [
    "vllm-hwrouter-qwen25-3b-scrape1.txt",
    "vllm-hwrouter-qwen25-3b-scrape2.txt",
    "vllm-hwrouter-qwen25-3b-scrape3.txt",
    "vllm-hwrouter-qwen25-3b-scrape4.txt",
    "vllm-hwrouter-qwen25-3b-scrape5.txt",
    "vllm-hwrouter-qwen25-3b-scrape6.txt",
    "vllm-hwrouter-qwen15-05b-idle.txt",
    "dynamo-frontend-dynamo-docs-fe.txt",
    "sglang-dynamo-docs-worker.txt",
    "sglang-sglang-docs-llama31-8b-busy.txt",
    "trtllm-dynamo-docs-worker.txt",
    "llamacpp-ik_llama-pr695.txt",
    "tritontrtllm-tensorrtllm_backend-readme.txt",
    "tei-opea-genaicomps-excerpt.txt",
];

/// The one sample of `name` with `labels` among its labels, as written.
fn sample(body: &str, name: &str, labels: &[&str]) -> f64 {
    let found: Vec<f64> = body
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter(|l| labels.iter().all(|kv| l.contains(kv)))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse().unwrap())
        .collect();
    assert_eq!(found.len(), 1, "{name} {labels:?}: {found:?}");
    found[0]
}

/// Every capture at once, each served as it is at both of top's reads:
/// one row each, every endpoint up whatever its vocabulary, the gauges as
/// written, no rate but zero and no percentile from reads that did not
/// change, and exit 0.
#[test]
fn every_capture_at_once_through_top_once_json() {
    let Some(dir) = captures() else { return };
    let bodies: Vec<String> = FILES.iter().map(|f| read(&dir, f)).collect();
    let urls: Vec<String> = bodies
        .iter()
        .map(|b| serve(Arc::new(Mutex::new(b.clone()))))
        .collect();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_nemo-lens"))
        .args(["top", "--once", "--json", "--interval", "0.3"])
        .args(&urls)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let object: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows = object["replicas"].as_array().unwrap();
    assert_eq!(rows.len(), FILES.len(), "one row each: {object:#}");
    let row = |file: &str| {
        let i = FILES.iter().position(|f| *f == file).unwrap();
        let row = &rows[i];
        assert_eq!(row["url"], urls[i].as_str());
        assert_eq!(row["status"], "up", "{file}: {row:#}");
        row.clone()
    };
    let vocabularies: BTreeMap<&str, serde_json::Value> = FILES
        .iter()
        .map(|f| (*f, row(f)["vocabulary"].clone()))
        .collect();
    let expected = [
        ("vllm", 7),
        ("dynamo", 1),
        ("sglang", 2),
        ("trtllm", 1),
        ("llama.cpp", 1),
        ("tei", 1),
    ];
    for (name, n) in expected {
        let got = vocabularies.values().filter(|v| **v == name).count();
        assert_eq!(got, n, "{name}: {vocabularies:#?}");
    }
    // Triton's excerpt holds only nv_trt_llm_* gauges: up, and said why
    // nothing is shown.
    let triton = row("tritontrtllm-tensorrtllm_backend-readme.txt");
    assert!(triton["vocabulary"].is_null());
    assert_eq!(triton["error"], "no serving metrics recognised");

    // Gauges as written.
    let busy = "sglang-sglang-docs-llama31-8b-busy.txt";
    let text = read(&dir, busy);
    let sglang = row(busy);
    assert_eq!(
        sglang["running"],
        sample(&text, "sglang:num_running_reqs", &[])
    );
    assert_eq!(
        sglang["waiting"],
        sample(&text, "sglang:num_queue_reqs", &[])
    );
    assert_eq!(
        sglang["kv_cache_usage"],
        sample(&text, "sglang:token_usage", &[])
    );
    let llama = "llamacpp-ik_llama-pr695.txt";
    let text = read(&dir, llama);
    let llama = row(llama);
    assert_eq!(
        llama["kv_cache_usage"],
        sample(&text, "llamacpp:kv_cache_usage_ratio", &[])
    );
    assert_eq!(
        llama["running"],
        sample(&text, "llamacpp:requests_processing", &[])
    );
    assert_eq!(
        llama["waiting"],
        sample(&text, "llamacpp:requests_deferred", &[])
    );
    // llama.cpp counts no requests: absent, never 0.
    assert!(llama["requests_per_s"].is_null(), "{llama:#}");
    assert_eq!(llama["output_tokens_per_s"], 0.0);
    let trtllm = "trtllm-dynamo-docs-worker.txt";
    let text = read(&dir, trtllm);
    let trtllm = row(trtllm);
    assert_eq!(
        trtllm["kv_cache_usage"],
        sample(
            &text,
            "dynamo_component_kvstats_gpu_cache_usage_percent",
            &[]
        )
    );
    assert_eq!(
        trtllm["running"],
        sample(
            &text,
            "dynamo_component_inflight_requests",
            &["dynamo_endpoint=\"generate\""]
        )
    );
    // Nothing invented from reads that did not change: rates zero where
    // there is a counter, no percentile anywhere.
    for (i, row) in rows.iter().enumerate() {
        let rate = &row["requests_per_s"];
        assert!(rate.is_null() || *rate == 0.0, "{}: {row:#}", FILES[i]);
        for histogram in ["ttft_s", "tpot_s"] {
            for p in ["p50", "p95", "p99"] {
                assert!(row[histogram][p].is_null(), "{}: {row:#}", FILES[i]);
            }
        }
    }
}

/// `histogram_quantile(q, ...)` over the bucket deltas of `family` between
/// two bodies, as PromQL computes it (linear within the bucket, the first
/// from 0, the `+Inf` bucket answering the highest finite bound), written
/// apart from top's own.
fn histogram_quantile(q: f64, before: &str, after: &str, family: &str) -> f64 {
    let buckets = |body: &str| -> Vec<(f64, f64)> {
        let mut buckets: Vec<(f64, f64)> = body
            .lines()
            .filter(|l| l.starts_with(&format!("{family}_bucket{{")))
            .map(|l| {
                let le = l.split("le=\"").nth(1).unwrap().split('"').next().unwrap();
                let bound = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().unwrap()
                };
                (bound, l.rsplit_once(' ').unwrap().1.parse().unwrap())
            })
            .collect();
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        buckets
    };
    let (b0, b1) = (buckets(before), buckets(after));
    let delta: Vec<(f64, f64)> = b0.iter().zip(&b1).map(|(a, b)| (b.0, b.1 - a.1)).collect();
    let total = delta.last().unwrap().1;
    let rank = q * total;
    let i = delta.iter().position(|(_, c)| *c >= rank).unwrap();
    if delta[i].0.is_infinite() {
        return delta[i - 1].0;
    }
    let (lower, below) = if i == 0 {
        (0.0, 0.0)
    } else {
        (delta[i - 1].0, delta[i - 1].1)
    };
    lower + (delta[i].0 - lower) * (rank - below) / (delta[i].1 - below)
}

/// The six successive scrapes of one vLLM server, fed with the times
/// SOURCES.md gives: each interval's request and token rates are its
/// counter deltas over its seconds, and its TTFT and TPOT percentiles are
/// PromQL's over its bucket deltas.
#[test]
fn six_vllm_scrapes_read_as_promql_reads_them() {
    let Some(dir) = captures() else { return };
    let scrapes: Vec<String> = FILES[..6].iter().map(|f| read(&dir, f)).collect();
    // 02:23:38.544, :42.107, :45.669, :47.357, :50.926, :54.502.
    let at_ms = [38_544_u64, 42_107, 45_669, 47_357, 50_926, 54_502];
    let start = Instant::now();
    let mut fleet = Fleet::new(
        &["http://vllm:8000/metrics".to_owned()],
        Duration::from_secs(1),
    );
    for (n, body) in scrapes.iter().enumerate() {
        let at = start + Duration::from_millis(at_ms[n] - at_ms[0]);
        fleet.record(0, at, Outcome::Read(parse_text(body).unwrap()));
        if n == 0 {
            continue;
        }
        let (before, after) = (&scrapes[n - 1], body);
        let seconds = (at_ms[n] - at_ms[n - 1]) as f64 / 1000.0;
        let (rows, _) = fleet.rows();
        assert_eq!(rows.len(), 1);
        let stats = &rows[0].interval;
        let delta = |name: &str| {
            let total = |body: &str| -> f64 {
                body.lines()
                    .filter(|l| l.starts_with(&format!("{name}{{")))
                    .map(|l| l.rsplit_once(' ').unwrap().1.parse::<f64>().unwrap())
                    .sum()
            };
            total(after) - total(before)
        };
        let close = |got: Option<f64>, want: f64, what: &str| {
            let got = got.unwrap_or_else(|| panic!("scrape {n}: no {what}"));
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                "scrape {n}: {what} {got}, want {want}"
            );
        };
        close(
            stats.requests_per_s,
            delta("vllm:request_success_total") / seconds,
            "requests/s",
        );
        assert_eq!(
            delta("vllm:request_success_total"),
            1.0,
            "SOURCES.md: one a scrape"
        );
        close(
            stats.input_tokens_per_s,
            delta("vllm:prompt_tokens_total") / seconds,
            "input tokens/s",
        );
        close(
            stats.output_tokens_per_s,
            delta("vllm:generation_tokens_total") / seconds,
            "output tokens/s",
        );
        close(stats.error_rate, 0.0, "error rate");
        let ttft = Percentiles::of(stats.ttft.as_ref());
        let tpot = Percentiles::of(stats.tpot.as_ref());
        for (q, got_ttft, got_tpot) in [
            (0.5, ttft.p50, tpot.p50),
            (0.95, ttft.p95, tpot.p95),
            (0.99, ttft.p99, tpot.p99),
        ] {
            close(
                got_ttft,
                histogram_quantile(q, before, after, "vllm:time_to_first_token_seconds"),
                &format!("TTFT p{}", q * 100.0),
            );
            close(
                got_tpot,
                histogram_quantile(
                    q,
                    before,
                    after,
                    "vllm:request_time_per_output_token_seconds",
                ),
                &format!("TPOT p{}", q * 100.0),
            );
        }
    }
    // One scrape read twice: rates zero, no percentile, no error rate
    // invented for an idle server.
    let idle = read(&dir, FILES[6]);
    let mut fleet = Fleet::new(
        &["http://idle:8000/metrics".to_owned()],
        Duration::from_secs(1),
    );
    for n in 0..2 {
        let at = start + Duration::from_secs(n);
        fleet.record(0, at, Outcome::Read(parse_text(&idle).unwrap()));
    }
    let (rows, _) = fleet.rows();
    let stats = &rows[0].interval;
    assert_eq!(stats.requests_per_s, Some(0.0));
    assert_eq!(stats.error_rate, None);
    assert_eq!(Percentiles::of(stats.ttft.as_ref()).p50, None);
}
