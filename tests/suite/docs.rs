//! The public documentation shows what a user of `nemo-lens` can paste.
//!
//! Items of the internal crates are re-exported (inlined) into the
//! `nemo_lens` docs with their doc examples, so an example that says
//! `use nemo_lens_core::..` would fail for anyone depending on `nemo-lens`.
//! The examples themselves are compiled as doc tests (the README's through
//! `ReadmeDoctests`); this checks what compiling cannot: which crate they name,
//! and that none is left out of compilation.

use std::fs;
use std::path::{Path, PathBuf};

/// Crates whose items reach users only through `nemo_lens`. `nemo-lens-naming`
/// is not among them: nothing of it is re-exported, and its own page documents
/// a dependency-free crate that is used on its own.
const INTERNAL: [&str; 9] = [
    "nemo_lens_core",
    "nemo_lens_prometheus",
    "nemo_lens_otlp",
    "nemo_lens_telemetry",
    "nemo_lens_macros",
    "nemo_lens_instruments",
    "nemo_lens_openai",
    "nemo_lens_metrics_bridge",
    "nemo_lens_registry_bridge",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
            out.push(path);
        }
    }
}

/// One line of documentation: its number, its text, whether it is in a
/// code fence (fence lines themselves count as inside), and whether it
/// opens one.
struct DocLine {
    number: usize,
    text: String,
    in_code: bool,
    opens: bool,
}

/// The documentation lines of `text`: in `.md` files every line, in `.rs`
/// files the `///` and `//!` lines.
fn doc_lines(path: &Path, text: &str) -> Vec<DocLine> {
    let markdown = path.extension().is_some_and(|e| e == "md");
    let mut inside = false;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let doc = if markdown {
            Some(line.trim_start())
        } else {
            let t = line.trim_start();
            t.strip_prefix("///")
                .or_else(|| t.strip_prefix("//!"))
                .map(str::trim_start)
        };
        let Some(doc) = doc else {
            inside = false;
            continue;
        };
        let fence = doc.starts_with("```");
        if fence {
            inside = !inside;
        }
        lines.push(DocLine {
            number: n + 1,
            text: doc.to_owned(),
            in_code: inside || fence,
            opens: fence && inside,
        });
    }
    lines
}

/// The lines inside code fences, each opening fence included (it counts
/// the examples), no closing one.
fn example_lines(path: &Path, text: &str) -> Vec<(usize, String)> {
    doc_lines(path, text)
        .into_iter()
        .filter(|line| line.in_code && (line.opens || !line.text.starts_with("```")))
        .map(|line| (line.number, line.text))
        .collect()
}

fn public_doc_sources() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md")];
    for dir in [
        "src",
        "nemo-lens-core/src",
        "nemo-lens-prometheus/src",
        "nemo-lens-otlp/src",
        "nemo-lens-telemetry/src",
        "nemo-lens-macros/src",
        "nemo-lens-instruments/src",
        "nemo-lens-openai/src",
        "nemo-lens-metrics-bridge/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    files
}

#[test]
fn no_doc_example_names_an_internal_crate() {
    let mut found = Vec::new();
    let mut examples = 0;
    for path in public_doc_sources() {
        let text = fs::read_to_string(&path).unwrap();
        let lines = example_lines(&path, &text);
        examples += lines.iter().filter(|(_, l)| l.starts_with("```")).count();
        for (n, line) in lines {
            if let Some(name) = INTERNAL.iter().find(|c| line.contains(*c)) {
                found.push(format!("{}:{n}: names {name}: {line}", path.display()));
            }
        }
    }
    // The scan itself must see the examples it guards.
    assert!(examples > 40, "only {examples} doc examples found");
    assert!(
        found.is_empty(),
        "doc examples naming an internal crate (use nemo_lens:: paths):\n{}",
        found.join("\n")
    );
}

/// The documentation lines outside code fences, link targets (`](..)`)
/// taken out: what a reader sees as text.
fn prose_lines(path: &Path, text: &str) -> Vec<(usize, String)> {
    doc_lines(path, text)
        .into_iter()
        .filter(|line| !line.in_code)
        .map(|line| {
            let mut seen = String::with_capacity(line.text.len());
            let mut rest = line.text.as_str();
            while let Some(at) = rest.find("](") {
                seen.push_str(&rest[..at + 1]);
                rest = rest[at + 2..]
                    .split_once(')')
                    .map_or("", |(_, after)| after);
            }
            seen.push_str(rest);
            (line.number, seen)
        })
        .collect()
}

/// The text of the pages users read names no internal crate either: a
/// reader cannot write `nemo_lens_naming::rules` with only `nemo-lens` in
/// their `Cargo.toml`. Link targets may name one (rustdoc resolves them to
/// the re-exported pages); the words shown may not.
#[test]
fn no_doc_prose_names_an_internal_crate() {
    let mut found = Vec::new();
    let mut lines = 0;
    for path in public_doc_sources() {
        let text = fs::read_to_string(&path).unwrap();
        for (n, line) in prose_lines(&path, &text) {
            lines += 1;
            let named = INTERNAL
                .iter()
                .chain(&["nemo_lens_naming"])
                .find(|c| line.contains(&format!("{c}::")));
            if let Some(name) = named {
                found.push(format!("{}:{n}: names {name}: {line}", path.display()));
            }
        }
    }
    assert!(lines > 2000, "only {lines} lines of prose found");
    assert!(
        found.is_empty(),
        "documentation naming an internal crate (use nemo_lens:: paths or plain words):\n{}",
        found.join("\n")
    );
}

#[test]
fn readme_and_guide_rust_blocks_are_all_compiled() {
    let mut pages = vec![root().join("README.md")];
    for entry in fs::read_dir(root().join("src/guides")).unwrap() {
        pages.push(entry.unwrap().path());
    }
    let mut in_readme = 0;
    for page in &pages {
        let text = fs::read_to_string(page).unwrap();
        let fences: Vec<&str> = text.lines().filter(|l| l.starts_with("```rust")).collect();
        if page.ends_with("README.md") {
            in_readme = fences.len();
        }
        // `ignore` is not compiled at all; `no_run` is compiled and not run
        // (for snippets that serve or export); `should_panic` is run and
        // must panic (for a mistake a test is meant to catch).
        for fence in fences {
            assert!(
                fence == "```rust" || fence == "```rust,no_run" || fence == "```rust,should_panic",
                "{}: block `{fence}` would not be compiled",
                page.display()
            );
        }
    }
    assert!(in_readme >= 1, "the README's first program");
}

/// The README is read on GitHub and crates.io, where rustdoc's hidden lines
/// (`# ` in a Rust block) would show as code.
#[test]
fn readme_rust_blocks_hide_nothing() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let mut inside = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            inside = line.starts_with("```rust");
            continue;
        }
        assert!(
            !(inside && (line == "#" || line.starts_with("# "))),
            "a hidden line in the README: {line}"
        );
    }
}

#[test]
fn the_scan_sees_examples_in_rust_doc_comments() {
    let text = "/// Text.\n///\n/// ```\n/// use nemo_lens_core::Meter;\n/// ```\nfn f() {}\n";
    let lines = example_lines(Path::new("x.rs"), text);
    assert_eq!(
        lines,
        vec![
            (3, "```".to_owned()),
            (4, "use nemo_lens_core::Meter;".to_owned())
        ]
    );
}
