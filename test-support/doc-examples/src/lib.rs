//! The doc examples of nemo-lens's internal crates, run as doc tests of the
//! facade: `#[cfg(doctest)] doc_examples!("nemo-lens-core/src", ..)` in
//! `nemo-lens` turns each doc comment of those sources that holds a code
//! block into a doc-only module, which rustdoc then tests with the facade's
//! own doc tests (one merged binary, edition 2024), as the `doc-comment`
//! crate does for a README.
//!
//! Why: those examples are written against `nemo_lens` (what their pages
//! show once re-exported, and what `tests/suite/docs.rs` holds them to), so
//! run as doc tests of the crate they are in they needed the facade as a
//! dev-dependency, and every crate below the exporters was rebuilt with
//! each edit to an exporter. Not published.

use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::parse::Parser as _;
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};

/// A doc-only module for each doc comment with a code block in the `.rs`
/// files under each directory given (relative to the invoking crate's
/// manifest directory), named after its file and line.
#[proc_macro]
pub fn doc_examples(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    match expand(input.into()) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let dirs = Punctuated::<LitStr, Token![,]>::parse_terminated.parse2(input)?;
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .ok_or_else(|| syn::Error::new(proc_macro2::Span::call_site(), "no CARGO_MANIFEST_DIR"))?;
    let mut modules = Vec::new();
    for dir in &dirs {
        let mut files = Vec::new();
        rust_files(&root.join(dir.value()), &mut files)
            .map_err(|e| syn::Error::new(dir.span(), format!("{}: {e}", dir.value())))?;
        files.sort();
        for file in files {
            let text = fs::read_to_string(&file)
                .map_err(|e| syn::Error::new(dir.span(), format!("{}: {e}", file.display())))?;
            let shown = file
                .strip_prefix(&root)
                .unwrap_or(&file)
                .display()
                .to_string();
            for (line, doc) in doc_blocks(&text) {
                if !doc.contains("```") {
                    continue;
                }
                let name = format_ident!("{}_L{line}", identifier(&shown));
                let doc = format!("From `{shown}`, line {line}.\n\n{doc}");
                modules.push(quote! {
                    #[doc = #doc]
                    pub mod #name {}
                });
            }
        }
    }
    Ok(quote! {
        /// The internal crates' doc examples, run as this crate's doc tests.
        #[allow(non_snake_case)]
        pub mod __doc_examples {
            #(#modules)*
        }
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// Each run of `///` (or `//!`) lines, as rustdoc reads it: the markers
/// taken off and the common indentation removed, with the line it starts on
/// (1-based).
fn doc_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, &str, Vec<&str>)> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        // `////` is a plain comment.
        let doc = ["///", "//!"].into_iter().find_map(|marker| {
            trimmed
                .strip_prefix(marker)
                .filter(|rest| !rest.starts_with('/'))
                .map(|rest| (marker, rest))
        });
        match (doc, &mut current) {
            (Some((marker, rest)), Some((_, kind, lines))) if *kind == marker => lines.push(rest),
            (doc, current) => {
                if let Some((start, _, lines)) = current.take() {
                    blocks.push((start, unindent(&lines)));
                }
                *current = doc.map(|(marker, rest)| (n + 1, marker, vec![rest]));
            }
        }
    }
    if let Some((start, _, lines)) = current {
        blocks.push((start, unindent(&lines)));
    }
    blocks
}

fn unindent(lines: &[&str]) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `nemo-lens-core/src/meter/mod.rs` as an identifier.
fn identifier(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_doc_lines_are_blocks_with_their_first_line() {
        let text = "//! Module.\n//!\n//! ```\n//! let x = 1;\n//! ```\n\n/// One.\n///   Two.\n#[derive(Debug)]\n/// Apart.\n//// Not docs.\nfn f() {}\n";
        assert_eq!(
            doc_blocks(text),
            [
                (1, "Module.\n\n```\nlet x = 1;\n```".to_owned()),
                (7, "One.\n  Two.".to_owned()),
                (10, "Apart.".to_owned()),
            ]
        );
    }

    #[test]
    fn paths_become_identifiers() {
        assert_eq!(
            identifier("nemo-lens-core/src/meter/mod.rs"),
            "nemo_lens_core_src_meter_mod_rs"
        );
    }
}
