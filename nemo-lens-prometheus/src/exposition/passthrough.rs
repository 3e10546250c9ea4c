//! Families another library already wrote in the text format, copied into
//! a text scrape rather than parsed and written again: the library's
//! encoder did that work once, and doing it twice made a scrape of a
//! `prometheus-client` registry cost three times its own. Each sample line
//! gains the resource labels it lacks; nothing else changes. The families
//! are found by `nemo-lens-core` (`Registry::gather_for_text` needs them).

/// `block` with `labels` (names and values, already escaped) added to each
/// sample line that does not have that label name.
pub(crate) fn splice(block: &str, labels: &[(String, String)], out: &mut String) {
    if labels.is_empty() {
        out.push_str(block);
        return;
    }
    for line in block.split_inclusive('\n') {
        if line.starts_with('#') {
            out.push_str(line);
            continue;
        }
        let Some(name_end) = line.find(['{', ' ']) else {
            out.push_str(line);
            continue;
        };
        if line.as_bytes()[name_end] == b' ' {
            out.push_str(&line[..name_end]);
            out.push('{');
            push_labels(out, labels, &[], true);
            out.push('}');
            out.push_str(&line[name_end..]);
            continue;
        }
        let Some((close, names)) = label_names(&line[name_end + 1..]) else {
            out.push_str(line);
            continue;
        };
        let close = name_end + 1 + close;
        out.push_str(&line[..close]);
        push_labels(out, labels, &names, close == name_end + 1);
        out.push_str(&line[close..]);
    }
}

/// `labels` not among `names`, comma-separated, after a comma unless
/// `first`.
fn push_labels(out: &mut String, labels: &[(String, String)], names: &[&str], mut first: bool) {
    for (name, value) in labels {
        if names.contains(&name.as_str()) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(name);
        out.push_str("=\"");
        out.push_str(value);
        out.push('"');
    }
}

/// Where the label set that `labels` starts (just after `{`) closes, and
/// its label names; quotes and escapes respected, so a `}` in a value is
/// not taken for the end.
fn label_names(labels: &str) -> Option<(usize, Vec<&str>)> {
    let bytes = labels.as_bytes();
    let mut names = Vec::new();
    let mut at = 0;
    loop {
        while at < bytes.len() && (bytes[at] == b',' || bytes[at] == b' ') {
            at += 1;
        }
        if *bytes.get(at)? == b'}' {
            return Some((at, names));
        }
        let eq = at + labels[at..].find('=')?;
        names.push(&labels[at..eq]);
        at = eq + 1;
        if *bytes.get(at)? != b'"' {
            return None;
        }
        at += 1;
        loop {
            match *bytes.get(at)? {
                b'\\' => at += 2,
                b'"' => break,
                _ => at += 1,
            }
        }
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nemo_lens_core::__internal::text_blocks as blocks;

    const TEXT: &str = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"}\\\"{\",y=\"1\"} 3\na_total 1\n\
                        # HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n\
                        # HELP orphan no type\n";

    #[test]
    fn splice_adds_missing_labels_only() {
        let labels = vec![
            ("y".to_owned(), "r".to_owned()),
            ("job".to_owned(), "j".to_owned()),
        ];
        let mut out = String::new();
        for block in blocks(TEXT) {
            splice(&block.text, &labels, &mut out);
        }
        assert!(
            out.contains("a_total{x=\"}\\\"{\",y=\"1\",job=\"j\"} 3\n"),
            "{out}"
        );
        assert!(out.contains("a_total{y=\"r\",job=\"j\"} 1\n"), "{out}");
        assert!(
            out.contains("h_bucket{le=\"+Inf\",y=\"r\",job=\"j\"} 2\n"),
            "{out}"
        );
        assert!(out.contains("# TYPE h histogram\n"), "{out}");
    }
}
