//! The `nemo-lens` binary: each subcommand writes what the library
//! generates, and `promtool` accepts the rules.

use std::process::Command;

use nemo_lens::SemconvOptIn;
use nemo_lens_cli::{builtin_sets, builtin_sets_for, AlertPolicy};

pub(crate) fn run(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_nemo-lens"))
        .args(args)
        .output()
        .expect("run nemo-lens");
    assert!(
        output.status.success(),
        "nemo-lens {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

/// The exit code and stderr of a run that must fail, writing nothing to
/// stdout.
pub(crate) fn fail(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_nemo-lens"))
        .args(args)
        .output()
        .expect("run nemo-lens");
    assert!(!output.status.success(), "nemo-lens {args:?} succeeded");
    assert!(
        output.stdout.is_empty(),
        "nemo-lens {args:?} wrote to stdout"
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code(), stderr)
}

#[test]
fn subcommands_write_the_generated_documents() {
    let sets = builtin_sets();
    let dashboard: serde_json::Value = serde_json::from_str(&run(&["dashboard"])).unwrap();
    assert_eq!(dashboard, nemo_lens_cli::dashboard(&sets));
    let catalog: serde_json::Value =
        serde_json::from_str(&run(&["catalog", "--format", "json"])).unwrap();
    assert_eq!(catalog, nemo_lens_cli::catalog_json(&sets));
    assert_eq!(run(&["catalog"]), nemo_lens_cli::catalog_markdown(&sets));
    assert_eq!(
        run(&["rules"]),
        nemo_lens_cli::rules(&sets, &AlertPolicy::default()).to_yaml()
    );
    // --set narrows to built-in sets.
    let rl: serde_json::Value =
        serde_json::from_str(&run(&["catalog", "--format", "json", "--set", "rl"])).unwrap();
    assert_eq!(rl["sets"].as_array().unwrap().len(), 1);
    assert_eq!(rl["sets"][0]["set"], "RL training");
}

#[test]
fn semconv_opt_in_chooses_the_names_generated_for() {
    let names = |args: &[&str]| -> Vec<String> {
        let catalog: serde_json::Value = serde_json::from_str(&run(args)).unwrap();
        catalog["sets"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|set| set["instruments"].as_array().unwrap().clone())
            .map(|i| i["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let default = names(&["catalog", "--format", "json", "--set", "inference"]);
    let latest = names(&[
        "catalog",
        "--format",
        "json",
        "--set",
        "inference",
        "--semconv-opt-in",
        "gen_ai_latest_experimental",
    ]);
    let dup = names(&[
        "catalog",
        "--format",
        "json",
        "--set",
        "inference",
        "--semconv-opt-in",
        "gen_ai_latest_experimental/dup",
    ]);
    let has = |names: &[String], name: &str| names.iter().any(|n| n == name);
    assert!(has(&default, "gen_ai.client.token.usage"));
    assert!(!has(&default, "gen_ai.client.inference.usage.input_tokens"));
    assert!(!has(&latest, "gen_ai.client.token.usage"));
    assert!(!has(&latest, "gen_ai.client.operation.duration"));
    for name in [
        "gen_ai.client.inference.usage.input_tokens",
        "gen_ai.client.inference.usage.cache_read.input_tokens",
        "gen_ai.client.inference.operation.output_tokens",
        "gen_ai.client.inference.duration",
        "gen_ai.client.inference.time_per_output_chunk",
        "gen_ai.server.request.duration",
    ] {
        assert!(has(&latest, name), "{name} with the opt-in");
        assert!(has(&dup, name), "{name} with /dup");
    }
    assert!(has(&dup, "gen_ai.client.token.usage"));
    // The dashboard and rules follow the same choice.
    let latest_sets = builtin_sets_for(&SemconvOptIn::parse("gen_ai_latest_experimental"));
    let dashboard: serde_json::Value = serde_json::from_str(&run(&[
        "dashboard",
        "--semconv-opt-in",
        "gen_ai_latest_experimental",
    ]))
    .unwrap();
    assert_eq!(dashboard, nemo_lens_cli::dashboard(&latest_sets));
    let dashboard = dashboard.to_string();
    assert!(dashboard.contains("gen_ai_client_inference_usage_input_tokens_total"));
    assert!(!dashboard.contains("gen_ai_client_token_usage"));
    let rules = run(&["rules", "--semconv-opt-in", "gen_ai_latest_experimental"]);
    assert_eq!(
        rules,
        nemo_lens_cli::rules(&latest_sets, &AlertPolicy::default()).to_yaml()
    );
    assert!(rules.contains("gen_ai_client_inference_duration_seconds_bucket"));
}

#[test]
fn fixed_attribute_values_reach_the_catalog_and_the_dashboard() {
    let released: serde_json::Value =
        serde_json::from_str(&run(&["catalog", "--format", "json", "--set", "gym"])).unwrap();
    let queued = released["sets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|set| set["instruments"].as_array().unwrap())
        .find(|i| i["name"] == "gym.http.connection_pool.queue_duration_ms")
        .unwrap();
    assert_eq!(
        queued["attributes"][1],
        serde_json::json!({
            "key": "nemo.gym.http.connection_pool.queue_outcome",
            "values": ["ok", "abandoned"]
        })
    );
    // The unreleased instruments only when asked for, and titled so.
    assert!(!released.to_string().contains("gym.rollout.completed_total"));
    let catalog: serde_json::Value = serde_json::from_str(&run(&[
        "catalog",
        "--format",
        "json",
        "--set",
        "gym-unreleased",
    ]))
    .unwrap();
    for set in catalog["sets"].as_array().unwrap() {
        assert!(
            set["set"].as_str().unwrap().contains("unreleased NeMo-Gym"),
            "{set}"
        );
    }
    let completed = catalog["sets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|set| set["instruments"].as_array().unwrap())
        .find(|i| i["name"] == "gym.rollout.completed_total")
        .unwrap();
    assert_eq!(
        completed["attributes"],
        serde_json::json!([{ "key": "nemo.gym.rollout.outcome", "values": ["success", "failure"] }])
    );
    // Either outcome, or none set.
    assert_eq!(completed["max_series"], 3);

    let md = run(&["catalog", "--set", "gym-unreleased"]);
    let row = md
        .lines()
        .find(|l| l.starts_with("| `gym.http.retry_total` |"))
        .unwrap();
    assert!(
        row.contains(
            "| `nemo.gym.http.retry_reason` (`server_disconnected`, `client_os_error`, \
             `timeout`, `other`); at most 5 series |"
        ),
        "{row}"
    );

    let dashboard: serde_json::Value =
        serde_json::from_str(&run(&["dashboard", "--set", "gym"])).unwrap();
    let outcome = dashboard["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "nemo_gym_http_connection_pool_queue_outcome")
        .unwrap();
    assert_eq!(outcome["type"], "custom");
    assert_eq!(outcome["query"], "ok,abandoned");
}

#[test]
fn bad_arguments_are_errors_naming_the_value() {
    let (_, stderr) = fail(&["catalog", "--format", "yaml"]);
    assert!(
        stderr.contains("yaml") && stderr.contains("md") && stderr.contains("json"),
        "{stderr}"
    );
}

#[test]
fn help_names_each_value_and_shows_no_empty_default() {
    for subcommand in ["catalog", "dashboard", "rules"] {
        let help = run(&[subcommand, "--help"]);
        for shown in [
            "--set <SET>",
            "--semconv-opt-in <VALUE>",
            "--histogram-aggregation <AGGREGATION>",
            "--spec <FILE>",
        ] {
            assert!(help.contains(shown), "{subcommand} --help: {shown}\n{help}");
        }
        assert!(!help.contains("<ONLY>"), "{subcommand} --help\n{help}");
        assert!(
            !help.contains("[default: \"\"]"),
            "{subcommand} --help\n{help}"
        );
    }
}

#[test]
fn a_mistyped_subcommand_or_option_gets_a_suggestion() {
    let (code, stderr) = fail(&["dashbord"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("unrecognized subcommand 'dashbord'")
            && stderr.contains("a similar subcommand exists: 'dashboard'"),
        "{stderr}"
    );
    let (_, stderr) = fail(&["catalog", "--sett", "rl"]);
    assert!(
        stderr.contains("a similar argument exists: '--set'"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_histogram_aggregation_is_an_error_naming_it() {
    let (_, stderr) = fail(&["rules", "--histogram-aggregation", "exponential"]);
    assert!(
        stderr.contains("--histogram-aggregation")
            && stderr.contains("`exponential`")
            && stderr.contains("base2_exponential_bucket_histogram"),
        "{stderr}"
    );
}

fn spec(name: &str) -> String {
    format!("{}/../examples/specs/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn spec_files_add_their_groups() {
    let catalog: serde_json::Value = serde_json::from_str(&run(&[
        "catalog",
        "--format",
        "json",
        "--set",
        "rl",
        "--spec",
        &spec("nemo_rl.json"),
    ]))
    .unwrap();
    let sets = catalog["sets"].as_array().unwrap();
    assert_eq!(sets.len(), 2, "RL training, then the spec's group");
    assert_eq!(sets[1]["set"], "rl");
    let setup = sets[1]["instruments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "rl.setup.duration")
        .unwrap();
    assert_eq!(setup["kind"], "histogram");
    assert_eq!(setup["prometheus"]["family"], "rl_setup_duration_seconds");
    assert_eq!(setup["attribute_keys"][0], "rl.setup.phase");
    // A spec file names its attributes, not their values.
    assert_eq!(
        setup["attributes"],
        serde_json::json!([{ "key": "rl.setup.phase", "values": null }])
    );
    assert_eq!(setup["max_series"], serde_json::Value::Null);
    let rules = run(&["rules", "--spec", &spec("nemo_rl.json")]);
    assert!(
        rules.contains("record: \"nemo_lens:rl_setup_duration_seconds:p99_rate5m\""),
        "{rules}"
    );
}

#[test]
fn a_bad_spec_file_exits_non_zero_naming_each_key_and_rule() {
    let (code, stderr) = fail(&["dashboard", "--spec", &spec("nemo_rl_as_declared.json")]);
    assert_eq!(code, Some(2));
    for (key, rule) in [
        ("efficiency_seconds", "duration-on-gauge"),
        ("efficiency_seconds", "unit-in-name"),
        ("efficiency_pct", "unit-in-name"),
        ("setup_duration", "duration-on-gauge"),
        ("sft_v2_step_duration", "duration-on-gauge"),
        ("sft_v2_valid_tokens_per_second", "unit-in-name"),
    ] {
        assert!(
            stderr.contains(&format!("key `{key}` [{rule}]")),
            "{key} {rule}: {stderr}"
        );
    }
    assert!(stderr.contains("nemo_rl_as_declared.json: metric group `rl` refused, 6 problems"));
    let (code, missing) = fail(&["rules", "--spec", "/nonexistent/spec.json"]);
    assert_eq!(code, Some(2));
    // Named once: the read error carries the path already.
    assert_eq!(
        missing.matches("/nonexistent/spec.json").count(),
        1,
        "{missing}"
    );
}

#[test]
fn promtool_accepts_the_rules() {
    let Ok(promtool) = which("promtool") else {
        // CI runs scripts/e2e.sh, which installs promtool and checks the
        // rules unconditionally.
        eprintln!("SKIPPED promtool_accepts_the_rules: promtool is not on PATH (apt-get install prometheus)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("nemo-lens-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The rules `args` write pass promtool, which counts all of `sets`' rules.
    let check = |args: &[&str], sets: &[nemo_lens_cli::InstrumentSet]| {
        let file = dir.join("nemo-lens.rules.yml");
        std::fs::write(&file, run(args)).unwrap();
        let output = Command::new(&promtool)
            .arg("check")
            .arg("rules")
            .arg(&file)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let rules = nemo_lens_cli::rules(sets, &AlertPolicy::default());
        let count = rules.recording.len() + rules.alerts.len();
        assert!(
            output.status.success() && stdout.contains(&format!("SUCCESS: {count} rules found")),
            "promtool check rules ({args:?}): {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    for (opt_in, aggregation) in [
        ("", "explicit_bucket_histogram"),
        ("gen_ai_latest_experimental", "explicit_bucket_histogram"),
        (
            "gen_ai_latest_experimental/dup",
            "explicit_bucket_histogram",
        ),
        ("", "base2_exponential_bucket_histogram"),
    ] {
        let args = [
            "rules",
            "--semconv-opt-in",
            opt_in,
            "--histogram-aggregation",
            aggregation,
        ];
        check(&args, &builtin_sets_for(&SemconvOptIn::parse(opt_in)));
    }
    // A spec file's groups too.
    let mut sets = builtin_sets_for(&SemconvOptIn::none());
    sets.extend(nemo_lens_cli::spec_sets(
        &nemo_lens::groups::SpecFile::load(spec("nemo_rl.json")).unwrap(),
    ));
    check(&["rules", "--spec", &spec("nemo_rl.json")], &sets);
    let _ = std::fs::remove_dir_all(&dir);
}

pub(crate) fn which(program: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .ok_or(())
}
