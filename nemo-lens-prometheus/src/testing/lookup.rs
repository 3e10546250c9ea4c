//! What a [`Capture`](super::Capture) query says when it cannot be answered
//! honestly: a name or attribute key it has never seen (a typo that would
//! read as "never recorded"), or a query of the wrong kind.

use std::collections::BTreeSet;
use std::fmt;

/// What a query reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Query {
    LastValue,
    Sum,
    Count,
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Query::LastValue => "last_value",
            Query::Sum => "sum",
            Query::Count => "count",
        })
    }
}

/// The message for an instrument name the capture does not have.
pub(super) fn unknown_name(name: &str, known: &[String]) -> String {
    let listed = if known.is_empty() {
        "it has none yet".to_owned()
    } else {
        format!("it has: {}", known.join(", "))
    };
    format!(
        "the capture has no instrument named `{name}` (none was created on its meter, or it is \
         an observable that has reported nothing){}; {listed}",
        did_you_mean(name, known.iter().map(String::as_str))
    )
}

/// The message for an attribute key no series of `name` carries.
pub(super) fn unknown_key(name: &str, key: &str, keys: &BTreeSet<String>) -> String {
    let listed = if keys.is_empty() {
        "its series carry no attributes".to_owned()
    } else {
        format!(
            "its series carry: {}",
            keys.iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!(
        "no series of `{name}` carries the attribute `{key}`{}; {listed} (to assert that no \
         series carries it, read capture.attribute_sets(\"{name}\"))",
        did_you_mean(key, keys.iter().map(String::as_str))
    )
}

/// The message for a query of the wrong kind.
pub(super) fn wrong_kind(name: &str, kind: &str, use_instead: &str, query: Query) -> String {
    format!("`{name}` is {kind}: read it with {use_instead}, not {query}")
}

/// ` (did you mean `x`?)` for the closest candidate, when one is close.
fn did_you_mean<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    let closest = candidates
        .map(|c| {
            (
                distance(&wanted.to_ascii_lowercase(), &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(d, _)| *d <= wanted.len().div_ceil(3).max(1))
        .min_by_key(|(d, _)| *d);
    match closest {
        Some((_, c)) => format!(" (did you mean `{c}`?)"),
        None => String::new(),
    }
}

/// Levenshtein distance over bytes: names and keys are ASCII.
fn distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substituted = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_name_is_suggested_when_it_is_close() {
        let known = ["rl.reward.mean".to_owned(), "rl.kl_divergence".to_owned()];
        assert_eq!(
            unknown_name("rl.reward.men", &known),
            "the capture has no instrument named `rl.reward.men` (none was created on its meter, \
             or it is an observable that has reported nothing) (did you mean `rl.reward.mean`?); \
             it has: rl.reward.mean, rl.kl_divergence"
        );
        assert!(!unknown_name("gym.sandbox.active", &known).contains("did you mean"));
        assert!(unknown_name("x", &[]).ends_with("; it has none yet"));
    }

    #[test]
    fn keys_are_listed_and_the_fix_named() {
        let keys: BTreeSet<String> = ["gen_ai.request.model".to_owned()].into();
        assert_eq!(
            unknown_key("gen_ai.client.token.usage", "gen_ai.request.modle", &keys),
            "no series of `gen_ai.client.token.usage` carries the attribute \
             `gen_ai.request.modle` (did you mean `gen_ai.request.model`?); its series carry: \
             gen_ai.request.model (to assert that no series carries it, read \
             capture.attribute_sets(\"gen_ai.client.token.usage\"))"
        );
    }

    #[test]
    fn edit_distance() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("same", "same"), 0);
    }
}
