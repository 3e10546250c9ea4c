//! The workspace keeps its layers (CONTRIBUTING.md, "The layers"): the
//! model at the bottom with no transport in its tree, each exporter's heavy
//! dependencies its own, every import pointing down, internal crates pinned
//! to each other exactly, and at most two integration-test binaries a
//! package. Read from `cargo metadata` and `cargo tree`, so a change to a
//! manifest that breaks a layer fails here, not in review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

/// Each workspace crate's layer, as CONTRIBUTING.md draws it; the
/// test-only crates stand above everything they test.
const LAYERS: &[(&str, u8)] = &[
    ("nemo-lens-naming", 0),
    ("nemo-lens-core", 1),
    ("nemo-lens-macros", 1),
    ("nemo-lens-prometheus", 2),
    ("nemo-lens-otlp", 2),
    ("nemo-lens-telemetry", 3),
    ("nemo-lens-instruments", 3),
    ("nemo-lens-metrics-bridge", 4),
    ("nemo-lens-registry-bridge", 4),
    ("nemo-lens-openai", 4),
    ("nemo-lens", 5),
    ("nemo-lens-cli", 6),
    ("nemo-lens-demo", 6),
    ("nemo-lens-test-support", 6),
    ("nemo-lens-doc-examples", 6),
    ("nemo-lens-ui", 6),
];

/// What no crate of the model's tree may hold: the transports belong to
/// the exporters.
const TRANSPORT: &[&str] = &["tonic", "hyper", "rustls", "reqwest", "prost", "tokio"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cargo(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("{cargo} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{cargo} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The workspace's packages as `cargo metadata --no-deps` reads them.
fn packages() -> Vec<serde_json::Value> {
    let metadata: serde_json::Value =
        serde_json::from_str(&cargo(&["metadata", "--format-version", "1", "--no-deps"])).unwrap();
    metadata["packages"].as_array().unwrap().clone()
}

fn name(package: &serde_json::Value) -> &str {
    package["name"].as_str().unwrap()
}

fn layer(name: &str) -> u8 {
    LAYERS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("{name} is not in LAYERS (nor in CONTRIBUTING.md's drawing)"))
        .1
}

/// The names of the packages in `package`'s normal dependency tree, with
/// `features` (cargo tree's own flags).
fn tree(package: &str, features: &[&str]) -> BTreeSet<String> {
    let mut args = vec!["tree", "-p", package, "-e", "normal", "--prefix", "none"];
    args.extend(["--format", "{p}", "--offline"]);
    args.extend(features);
    cargo(&args)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

fn transports_in(tree: &BTreeSet<String>) -> Vec<&String> {
    tree.iter()
        .filter(|p| {
            TRANSPORT
                .iter()
                .any(|t| p == t || p.starts_with(&format!("{t}-")))
        })
        .collect()
}

#[test]
fn the_model_holds_no_transport_with_every_feature() {
    let tree = tree("nemo-lens-core", &["--all-features"]);
    assert!(tree.contains("opentelemetry_sdk"), "{tree:?}");
    assert_eq!(transports_in(&tree), Vec::<&String>::new());
}

/// Without their features the exporters are their model halves (the
/// exposition; the settings): a crate that needs only those pays for no
/// server and no client.
#[test]
fn exporters_keep_their_transports_behind_their_features() {
    let prometheus = tree("nemo-lens-prometheus", &["--no-default-features"]);
    assert_eq!(transports_in(&prometheus), Vec::<&String>::new());
    let served = tree("nemo-lens-prometheus", &["--features", "prometheus"]);
    for server in ["hyper", "tokio", "prost"] {
        assert!(served.contains(server), "{server}: {served:?}");
    }
    let otlp = tree("nemo-lens-otlp", &["--no-default-features"]);
    assert!(otlp.contains("tonic"), "{otlp:?}");
    assert!(
        !otlp.contains("rustls"),
        "rustls without otlp-tls: {otlp:?}"
    );
    let tls = tree("nemo-lens-otlp", &["--features", "otlp-tls"]);
    assert!(tls.contains("rustls"), "{tls:?}");
    // The endpoint's TLS and basic auth are their own feature too.
    for crypto in ["rustls", "bcrypt"] {
        assert!(
            !served.contains(crypto),
            "{crypto} without web-config: {served:?}"
        );
    }
    let web = tree("nemo-lens-prometheus", &["--features", "web-config"]);
    for crypto in ["rustls", "bcrypt", "yaml_serde"] {
        assert!(web.contains(crypto), "{crypto}: {web:?}");
    }
}

/// Each normal dependency of a workspace crate on another: (from, to, the
/// version it asks for). Tests may use what sits above (the facade's tests
/// of a bridge), so dev-dependencies are not among them.
fn internal_imports() -> Vec<(String, String, String)> {
    let packages = packages();
    let internal: BTreeSet<&str> = packages.iter().map(name).collect();
    let mut imports = Vec::new();
    for package in &packages {
        for dep in package["dependencies"].as_array().unwrap() {
            let to = dep["name"].as_str().unwrap();
            if dep["kind"].is_null() && internal.contains(to) {
                let req = dep["req"].as_str().unwrap();
                imports.push((name(package).to_owned(), to.to_owned(), req.to_owned()));
            }
        }
    }
    imports
}

#[test]
fn every_import_points_down() {
    let imports = internal_imports();
    assert!(imports.len() > 20, "{imports:?}");
    let upward: Vec<String> = imports
        .iter()
        .filter(|(from, to, _)| layer(to) >= layer(from))
        .map(|(from, to, _)| {
            format!(
                "{from} (layer {}) -> {to} (layer {})",
                layer(from),
                layer(to)
            )
        })
        .collect();
    assert_eq!(upward, Vec::<String>::new());
}

/// They share hidden APIs and process-wide state: two versions of one
/// internal crate in a graph would split that state silently.
#[test]
fn internal_crates_pin_each_other_exactly() {
    let versions: BTreeMap<String, String> = packages()
        .iter()
        .map(|p| {
            (
                name(p).to_owned(),
                p["version"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let loose: Vec<String> = internal_imports()
        .into_iter()
        .filter(|(_, to, req)| *req != format!("={}", versions[to]))
        .map(|(from, to, req)| format!("{from} -> {to} {req}"))
        .collect();
    assert_eq!(loose, Vec::<String>::new());
}

/// A binary per file linked the whole graph once per file: one binary per
/// package (two where a suite needs the cores to itself).
#[test]
fn no_package_has_more_than_two_integration_test_binaries() {
    let mut crowded = Vec::new();
    for package in packages() {
        let tests: Vec<&str> = package["targets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "test"))
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        if tests.len() > 2 {
            crowded.push(format!("{}: {tests:?}", name(&package)));
        }
    }
    assert_eq!(crowded, Vec::<String>::new());
}

/// Users depend on `nemo-lens` alone; a published internal crate says so
/// on the page crates.io shows for it.
#[test]
fn every_internal_crate_sends_users_to_the_facade() {
    let mut silent = Vec::new();
    for package in packages() {
        let published = !package["publish"].as_array().is_some_and(Vec::is_empty);
        let internal = !matches!(
            name(&package),
            "nemo-lens" | "nemo-lens-cli" | "nemo-lens-naming"
        );
        if !(published && internal) {
            continue;
        }
        let manifest = PathBuf::from(package["manifest_path"].as_str().unwrap());
        let readme =
            std::fs::read_to_string(manifest.with_file_name("README.md")).unwrap_or_default();
        if !readme.contains("Depend on [`nemo-lens`]") {
            silent.push(name(&package).to_owned());
        }
    }
    assert_eq!(silent, Vec::<String>::new());
}

/// CONTRIBUTING.md's drawing of the layers names each crate in the layer
/// `LAYERS` gives it.
#[test]
fn contributing_draws_the_layers_the_manifests_keep() {
    let text = std::fs::read_to_string(root().join("CONTRIBUTING.md")).unwrap();
    let drawing = text
        .split("```text\n")
        .nth(1)
        .and_then(|t| t.split("```").next())
        .expect("CONTRIBUTING.md's layer drawing");
    let mut drawn = BTreeMap::new();
    let mut current = None;
    for line in drawing.lines() {
        if let Some(rest) = line.strip_prefix("layer ") {
            current = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u8>().ok());
        }
        let crates = line.get(10..).unwrap_or("").split('→').next().unwrap_or("");
        for name in crates
            .split(',')
            .map(str::trim)
            .filter(|n| n.starts_with("nemo-lens"))
        {
            drawn.insert(
                name.split_whitespace().next().unwrap().to_owned(),
                current.unwrap(),
            );
        }
    }
    // The test-only crates are not drawn: nothing ships on them.
    let shipped: BTreeMap<String, u8> = LAYERS
        .iter()
        .filter(|(n, _)| {
            !matches!(
                *n,
                "nemo-lens-test-support" | "nemo-lens-doc-examples" | "nemo-lens-ui"
            )
        })
        .map(|(n, l)| ((*n).to_owned(), *l))
        .collect();
    assert_eq!(drawn, shipped, "{drawing}");
}
