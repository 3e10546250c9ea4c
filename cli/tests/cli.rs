//! The `nemo-lens` binary: each subcommand writes what the library
//! generates, and `promtool` accepts the rules.

use std::process::Command;

use nemo_lens_cli::{builtin_sets, AlertPolicy};

fn run(args: &[&str]) -> String {
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
fn bad_arguments_are_errors_naming_the_value() {
    let output = Command::new(env!("CARGO_BIN_EXE_nemo-lens"))
        .args(["catalog", "--format", "yaml"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("yaml") && stderr.contains("md") && stderr.contains("json"),
        "{stderr}"
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
    let file = dir.join("nemo-lens.rules.yml");
    std::fs::write(&file, run(&["rules"])).unwrap();
    let output = Command::new(promtool)
        .arg("check")
        .arg("rules")
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "promtool check rules: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rules = nemo_lens_cli::rules(&builtin_sets(), &AlertPolicy::default());
    let count = rules.recording.len() + rules.alerts.len();
    assert!(
        stdout.contains(&format!("SUCCESS: {count} rules found")),
        "{stdout}"
    );
}

fn which(program: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .ok_or(())
}
