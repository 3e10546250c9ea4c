//! Text shared by error messages: "did you mean" suggestions for misspelled
//! keys, and types written as a person would write them.

/// The candidate closest to `typo`, if it is close enough to be a likely typo.
pub fn closest<'a>(typo: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|candidate| (distance(typo, candidate), *candidate))
        .filter(|(d, candidate)| *d <= candidate.len().max(typo.len()) / 3 + 1)
        .min_by_key(|(d, _)| *d)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// `message` followed by a suggestion when one is close.
pub fn unknown(what: &str, typo: &str, candidates: &[&str]) -> String {
    let expected = candidates
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match closest(typo, candidates) {
        Some(hint) => {
            format!("unknown {what} `{typo}`: did you mean `{hint}`? (expected one of {expected})")
        }
        None => format!("unknown {what} `{typo}` (expected one of {expected})"),
    }
}

/// A type as a person would write it, for messages.
pub fn display_type(ty: &syn::Type) -> String {
    quote::ToTokens::to_token_stream(ty)
        .to_string()
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_misses_only() {
        let keys = ["unit", "description", "buckets", "attr"];
        assert_eq!(closest("unti", &keys), Some("unit"));
        assert_eq!(closest("bucket", &keys), Some("buckets"));
        assert_eq!(closest("descripton", &keys), Some("description"));
        assert_eq!(closest("color", &keys), None);
    }
}
