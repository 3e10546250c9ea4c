//! Families another library already wrote in the text format (format
//! 0.0.4), found without parsing the samples: a text scrape copies them
//! as written (the Prometheus exporter adds the resource labels).

use super::{GatheredKind, TextBlock};

/// The families of `text` (format 0.0.4), in order. A family starts at its
/// `# HELP` line, or at `# TYPE` when it has none.
pub fn blocks(text: &str) -> Vec<TextBlock> {
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
        } else if !trimmed.is_empty()
            && !trimmed.starts_with('#')
            && let Some((_, block)) = &mut open
        {
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
    // A HELP line with no TYPE after it belongs to no family.
    let end = help_pending
        .filter(|(_, at)| open.as_ref().is_some_and(|(start, _)| at > start))
        .map_or(text.len(), |(_, at)| at);
    close(&mut open, end);
    blocks
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
}
