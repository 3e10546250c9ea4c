//! Families another library already wrote in the text format, copied into
//! a text scrape rather than parsed and written again: the library's
//! encoder did that work once, and doing it twice made a scrape of a
//! `prometheus-client` registry cost three times its own. Each sample line
//! gains the resource labels it lacks; nothing else changes.

use crate::owned::{GatheredKind, TextBlock};

/// The families of `text` (format 0.0.4), in order. A family starts at its
/// `# HELP` line, or at `# TYPE` when it has none.
pub(crate) fn blocks(text: &str) -> Vec<TextBlock> {
    let mut blocks: Vec<TextBlock> = Vec::new();
    let mut help_pending: Option<(&str, usize)> = None;
    let mut offset = 0;
    let mut open: Option<(usize, TextBlock)> = None;
    let mut close = |open: &mut Option<(usize, TextBlock)>, end: usize| {
        if let Some((start, mut block)) = open.take() {
            block.text = text[start..end].to_owned();
            blocks.push(block);
        }
    };
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_end_matches('\n');
        if let Some(rest) = trimmed.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap_or_default();
            help_pending = Some((name, start));
        } else if let Some(rest) = trimmed.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            let begins = match help_pending.take() {
                Some((described, at)) if described == name => at,
                _ => start,
            };
            close(&mut open, begins);
            let kind = GatheredKind::from_type(kind);
            open = Some((
                begins,
                TextBlock {
                    name: name.to_owned(),
                    kind,
                    text: String::new(),
                    series: 0,
                },
            ));
        } else if !trimmed.is_empty() && !trimmed.starts_with('#') {
            if let Some((_, block)) = &mut open {
                let sample = trimmed.split(['{', ' ']).next().unwrap_or_default();
                let counts = match block.kind {
                    GatheredKind::Histogram | GatheredKind::Summary => {
                        sample.strip_suffix("_count") == Some(block.name.as_str())
                    }
                    _ => true,
                };
                block.series += usize::from(counts);
            }
        }
    }
    // A HELP line with no TYPE after it belongs to no family.
    let end = help_pending
        .filter(|(_, at)| open.as_ref().is_some_and(|(start, _)| at > start))
        .map_or(text.len(), |(_, at)| at);
    close(&mut open, end);
    blocks
}

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

    const TEXT: &str = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"}\\\"{\",y=\"1\"} 3\na_total 1\n\
                        # HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n\
                        # HELP orphan no type\n";

    #[test]
    fn blocks_split_families_and_count_series() {
        let blocks = blocks(TEXT);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].name, "a_total");
        assert_eq!(blocks[0].series, 2);
        assert!(blocks[0].text.starts_with("# HELP a_total"));
        assert_eq!(blocks[1].kind, GatheredKind::Histogram);
        assert_eq!(blocks[1].series, 1);
        assert!(
            blocks[1].text.ends_with("h_count 2\n"),
            "{:?}",
            blocks[1].text
        );
    }

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
