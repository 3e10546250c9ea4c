//! How the text formats write what they quote: label values and HELP text
//! escaped, numbers as Prometheus writes them.

use std::fmt::Write as _;

/// A number as Prometheus writes one: Rust's shortest round-trip form,
/// `+Inf`, `-Inf` and `NaN`.
pub(crate) fn push_number(out: &mut String, value: f64) {
    /// Below 2^53 every whole `f64` is an exact `i64`, which Rust writes
    /// with the same digits as the float and several times faster (counts
    /// and bucket counts are most of a scrape).
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match value {
        v if v.is_nan() => out.push_str("NaN"),
        v if v.is_infinite() && v > 0.0 => out.push_str("+Inf"),
        v if v.is_infinite() => out.push_str("-Inf"),
        v if v.fract() == 0.0 && v.abs() < EXACT && !(v == 0.0 && v.is_sign_negative()) => {
            let _ = write!(out, "{}", v as i64);
        }
        v => {
            let _ = write!(out, "{v}");
        }
    }
}

/// Backslashes and newlines escaped, and double quotes in label values.
pub(crate) fn escape_into(out: &mut String, text: &str, quotes: bool) {
    let special = |c: char| c == '\\' || c == '\n' || (quotes && c == '"');
    if !text.contains(special) {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if quotes => out.push_str("\\\""),
            c => out.push(c),
        }
    }
}
