//! The features the README and the docs.rs front page document are exactly
//! the features `Cargo.toml` declares, so the tables cannot drift again.

use std::collections::BTreeSet;

/// The features `Cargo.toml` declares, `default` aside.
fn declared() -> BTreeSet<String> {
    let manifest = include_str!("../../Cargo.toml");
    let section = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("a [features] table");
    let section = section.split("\n[").next().unwrap_or(section);
    section
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(" = "))
        .map(|l| l.split(" = ").next().unwrap().trim().to_owned())
        .filter(|name| name != "default")
        .collect()
}

/// The first column of the feature table under `heading` in `page`.
fn documented(page: &str, heading: &str) -> BTreeSet<String> {
    let table = page
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("no {heading:?}"));
    table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|row| {
            row.split('|')
                .nth(1)
                .unwrap()
                .trim()
                .trim_matches('`')
                .to_owned()
        })
        .collect()
}

#[test]
fn the_readme_documents_every_feature() {
    assert_eq!(
        documented(include_str!("../../README.md"), "## Features"),
        declared()
    );
}

#[test]
fn the_front_page_documents_every_feature() {
    assert_eq!(
        documented(include_str!("../../src/guide.md"), "# Cargo features"),
        declared()
    );
}

#[test]
fn the_manifest_is_read() {
    let declared = declared();
    for feature in [
        "prometheus",
        "otlp",
        "metrics-bridge-023",
        "prometheus-client-bridge",
    ] {
        assert!(declared.contains(feature), "{declared:?}");
    }
}
