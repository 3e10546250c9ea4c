//! `nemo-lens rules --slo`: the goodput group passes `promtool check rules`,
//! and under `promtool test rules` each burn-rate alert fires when the
//! error budget burns at its rate and none does at 1x; on the goodput
//! counter and on a vLLM-shaped histogram bucket. A target between bucket
//! bounds is refused, naming the nearest ones.

use std::path::Path;
use std::process::Command;

use crate::commands::{fail, run, which};

/// The four alerts of one tag, from the fastest burn to the slowest.
fn alerts(tag: &str) -> [String; 4] {
    ["1h", "6h", "1d", "3d"].map(|long| format!("NemoLensSlo{tag}BudgetBurn{long}"))
}

/// `promtool test rules` on `rules` with one test group of `series` (two
/// hours at one sample a minute) evaluated at 2 h: the alerts in `firing`
/// fire, the others of `all` do not.
fn promtool_test(
    promtool: &Path,
    dir: &Path,
    rules: &str,
    series: &[(String, String)],
    all: &[String],
    firing: &[&str],
) {
    let rules_file = dir.join("goodput.rules.yml");
    std::fs::write(&rules_file, rules).unwrap();
    let mut test = format!(
        "rule_files:\n  - {}\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n",
        rules_file.display()
    );
    for (name, values) in series {
        test.push_str(&format!(
            "      - series: '{name}'\n        values: '{values}'\n"
        ));
    }
    test.push_str("    alert_rule_test:\n");
    for alert in all {
        test.push_str(&format!(
            "      - eval_time: 2h\n        alertname: {alert}\n"
        ));
        if firing.contains(&alert.as_str()) {
            test.push_str("        exp_alerts:\n          - exp_labels:\n");
            test.push_str(&format!("              severity: {}\n", severity(alert)));
            for (label, value) in labels_of(&series[0].0) {
                test.push_str(&format!("              {label}: {value}\n"));
            }
            test.push_str("            exp_annotations:\n");
            for key in ["summary", "description"] {
                test.push_str(&format!(
                    "              {key}: {}\n",
                    annotation(rules, alert, key)
                ));
            }
        } else {
            test.push_str("        exp_alerts: []\n");
        }
    }
    let test_file = dir.join("goodput.test.yml");
    std::fs::write(&test_file, &test).unwrap();
    let output = Command::new(promtool)
        .args(["test", "rules"])
        .arg(&test_file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "promtool test rules, firing {firing:?}:\n{}{}\n{test}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The annotation `key` of `alert` as the rule file writes it (a JSON
/// string, which YAML reads as written).
fn annotation(rules: &str, alert: &str, key: &str) -> String {
    let start = rules
        .find(&format!("- alert: \"{alert}\""))
        .unwrap_or_else(|| panic!("no alert {alert}"));
    let line = rules[start..]
        .lines()
        .find_map(|line| line.trim().strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("{alert} has no {key}"));
    line.to_owned()
}

fn severity(alert: &str) -> &'static str {
    if alert.ends_with("1h") || alert.ends_with("6h") {
        "page"
    } else {
        "ticket"
    }
}

/// The labels the rules group by, as the series carries them.
fn labels_of(series: &str) -> Vec<(&'static str, String)> {
    let value = |label: &str| {
        series
            .split(&format!("{label}=\""))
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(str::to_owned)
    };
    ["service_name", "job", "model_name"]
        .into_iter()
        .filter_map(|label| value(label).map(|v| (label, v)))
        .collect()
}

/// Per minute, `bad` of every 1000 requests missed an objective.
fn counter_series(bad: u64) -> Vec<(String, String)> {
    let judged = "nemo_inference_requests_judged_total";
    vec![
        (
            format!("{judged}{{service_name=\"chat\",nemo_inference_slo_result=\"met\"}}"),
            format!("0+{}x120", 1000 - bad),
        ),
        (
            format!("{judged}{{service_name=\"chat\",nemo_inference_slo_result=\"ttft\"}}"),
            format!("0+{bad}x120"),
        ),
    ]
}

/// Per minute, 1000 requests, `slow` of them over 250 ms.
fn vllm_series(slow: u64) -> Vec<(String, String)> {
    let labels = "job=\"vllm\",model_name=\"qwen\"";
    vec![
        (
            format!("vllm:time_to_first_token_seconds_count{{{labels}}}"),
            "0+1000x120".to_owned(),
        ),
        (
            format!("vllm:time_to_first_token_seconds_bucket{{{labels},le=\"0.25\"}}"),
            format!("0+{}x120", 1000 - slow),
        ),
        (
            format!("vllm:time_to_first_token_seconds_bucket{{{labels},le=\"+Inf\"}}"),
            "0+1000x120".to_owned(),
        ),
    ]
}

#[test]
fn each_burn_rate_alert_fires_at_its_rate_and_none_at_one_times() {
    let Ok(promtool) = which("promtool") else {
        eprintln!("SKIPPED each_burn_rate_alert_fires_at_its_rate_and_none_at_one_times: promtool is not on PATH (apt-get install prometheus)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("nemo-lens-goodput-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = run(&[
        "rules",
        "--slo",
        "time_to_first_token:250 request_latency:5000",
        "--objective",
        "0.99",
        "--engine",
        "vllm",
    ]);
    let check = Command::new(&promtool)
        .args(["check", "rules", "/dev/stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(rules.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let checked = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{checked}");
    // The goodput group: 8 ratios and the budget for goodput, the time to
    // first token and the request latency each, and four alerts each.
    let quantiles_and_alerts = run(&["rules"]);
    let base = quantiles_and_alerts.matches("- record:").count()
        + quantiles_and_alerts.matches("- alert:").count();
    assert!(
        checked.contains(&format!("SUCCESS: {} rules found", base + 3 * (8 + 1 + 4))),
        "{checked}"
    );

    // The budget is 1 %; the alerts burn it at 14.4x, 6x, 3x and 1x. At
    // 15x every alert fires, at 7x all but the fastest, at 4x the tickets,
    // at 1.5x the slowest; at 1x, none.
    for (tag, series) in [
        (
            "Goodput",
            counter_series as fn(u64) -> Vec<(String, String)>,
        ),
        ("Ttft", vllm_series),
    ] {
        let all = alerts(tag);
        for (bad, firing) in [(150, 4), (70, 3), (40, 2), (15, 1), (10, 0)] {
            let firing: Vec<&str> = all[4 - firing..].iter().map(String::as_str).collect();
            promtool_test(&promtool, &dir, &rules, &series(bad), &all, &firing);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_target_between_bucket_bounds_is_refused_naming_the_nearest() {
    let (code, stderr) = fail(&[
        "rules",
        "--slo",
        "time_to_first_token:300",
        "--engine",
        "vllm",
    ]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains(
            "time_to_first_token:300 is not a bucket bound of vllm:time_to_first_token_seconds, \
             so the share of requests within it cannot be read; the nearest bounds are 250 and \
             500 (ms)"
        ),
        "{stderr}"
    );
    let (_, objective) = fail(&[
        "rules",
        "--slo",
        "request_latency:3000",
        "--objective",
        "99",
    ]);
    assert!(
        objective.contains("--objective must be a share between 0 and 1"),
        "{objective}"
    );
    let (_, syntax) = fail(&["rules", "--slo", "ttft:300"]);
    assert!(
        syntax.contains("`ttft` is not an objective nemo-lens judges"),
        "{syntax}"
    );
}
