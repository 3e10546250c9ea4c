//! Whether a unit is UCUM, in its case-sensitive form, and the fix when it
//! is not. The rule is stated on [`rules::unit_problems`](crate::rules::unit_problems),
//! the one public entry point.
//!
//! UCUM has hundreds of atoms; only those a metric plausibly carries are
//! known here, so a rare but valid one is refused. That errs on the side a
//! user can fix with a line (or an issue adding the atom), while an unknown
//! spelling let through is scraped under a name no dashboard expects.

use std::ops::Range;

/// Atoms that take a prefix (UCUM's "metric" units): base and SI units, and
/// the information units.
const METRIC_ATOMS: &[&str] = &[
    "m", "s", "g", "rad", "K", "C", "cd", "mol", "sr", "Hz", "N", "Pa", "J", "W", "A", "V", "F",
    "Ohm", "S", "Wb", "Cel", "T", "H", "lm", "lx", "Bq", "Gy", "Sv", "l", "L", "t", "bar", "eV",
    "cal", "kat", "U", "[IU]", "[iU]", "Np", "B", "bit", "By", "Bd",
];

/// Atoms that take no prefix.
const PLAIN_ATOMS: &[&str] = &[
    "%", "min", "h", "d", "wk", "mo", "a", "mo_j", "mo_g", "mo_s", "a_j", "a_g", "a_t", "deg",
    "10*", "10^", "[ppth]", "[ppm]", "[ppb]", "[pptr]", "[pi]", "[degF]", "[in_i]", "[ft_i]",
    "[mi_i]", "[lb_av]", "[oz_av]",
    // Not UCUM (its kilo is `k`), but OpenTelemetry's own spelling, which
    // the Prometheus exporter scrapes as `_kilobytes`.
    "KBy", "KB",
];

/// UCUM's prefixes, binary ones included.
const PREFIXES: &[&str] = &[
    "Y", "Z", "E", "P", "T", "G", "M", "k", "h", "da", "d", "c", "m", "u", "n", "p", "f", "a", "z",
    "y", "Ki", "Mi", "Gi", "Ti",
];

/// Deepest nesting of parentheses parsed.
const MAX_DEPTH: usize = 8;

/// What UCUM expects, ending every refusal that has no fix.
const EXPECTED: &str = "UCUM expects units such as `s`, `ms`, `By`, `KiBy`, `1` or `%`, joined \
                        by `.` or `/`, and what is counted in braces, as in `{request}/s`";

/// Why a fix in braces is right, said once after it.
const COUNTED: &str = "UCUM puts what is counted in braces";
const NO_SPACE: &str = "UCUM annotations have no spaces";

/// The problem with an ASCII `unit`, if it is not UCUM: a sentence naming
/// the unit, with the whole unit rewritten when every wrong part has a known
/// fix.
pub(crate) fn problem(unit: &str) -> Option<String> {
    if unit.is_empty() {
        return None;
    }
    let mut parser = Parser {
        unit,
        pos: 0,
        depth: 0,
        wrong: Vec::new(),
    };
    if let Err(reason) = parser.main() {
        return Some(format!("unit `{unit}` is not UCUM: {reason}; {EXPECTED}"));
    }
    let wrong = parser.wrong;
    if wrong.is_empty() {
        return None;
    }
    if let Some(unfixed) = wrong.iter().find(|w| w.fix.is_none()) {
        let term = &unit[unfixed.span.clone()];
        return Some(if term == unit {
            format!("unit `{unit}` is not a UCUM unit; {EXPECTED}")
        } else {
            format!("unit `{unit}` is not UCUM: `{term}` is not a UCUM unit; {EXPECTED}")
        });
    }
    let mut fixed = String::with_capacity(unit.len() + 2);
    let mut end = 0;
    for part in &wrong {
        fixed.push_str(&unit[end..part.span.start]);
        fixed.push_str(part.fix.as_deref().unwrap_or_default());
        end = part.span.end;
    }
    fixed.push_str(&unit[end..]);
    let mut why: Vec<&str> = wrong.iter().filter_map(|w| w.why).collect();
    why.sort_unstable();
    why.dedup();
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" ({})", why.join("; "))
    };
    Some(format!("unit `{unit}` is not UCUM; write `{fixed}`{why}"))
}

/// A part of the unit that is not UCUM.
struct Wrong {
    span: Range<usize>,
    fix: Option<String>,
    why: Option<&'static str>,
}

/// UCUM's grammar, reduced to what tells a unit from a non-unit:
/// `main = ["/"] term`, `term = component (("." | "/") component)*`,
/// `component = "(" term ")" | annotation | symbol [annotation]`.
struct Parser<'a> {
    unit: &'a str,
    pos: usize,
    /// Parentheses open: bounded, as an overlong unit is still parsed (every
    /// problem is reported at once) and a proc-macro's stack is not ours.
    depth: usize,
    wrong: Vec<Wrong>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.unit.as_bytes().get(self.pos).copied()
    }

    fn main(&mut self) -> Result<(), String> {
        if self.peek() == Some(b'/') {
            self.pos += 1;
        }
        self.term()?;
        match self.peek() {
            None => Ok(()),
            Some(b')') => Err("a `)` closes no `(`".to_owned()),
            Some(b'}') => Err("a `}` closes no annotation".to_owned()),
            Some(_) => {
                let rest = &self.unit[self.pos..];
                let next = rest.split(['.', '/']).next().unwrap_or(rest);
                Err(format!(
                    "`{next}` must be joined to what comes before it by `.` or `/`"
                ))
            }
        }
    }

    fn term(&mut self) -> Result<(), String> {
        self.component()?;
        while let Some(b'.' | b'/') = self.peek() {
            self.pos += 1;
            self.component()?;
        }
        Ok(())
    }

    fn component(&mut self) -> Result<(), String> {
        match self.peek() {
            Some(b'(') => {
                if self.depth == MAX_DEPTH {
                    return Err(format!("parentheses nest more than {MAX_DEPTH} deep"));
                }
                self.pos += 1;
                self.depth += 1;
                self.term()?;
                self.depth -= 1;
                if self.peek() != Some(b')') {
                    return Err("a `(` is never closed".to_owned());
                }
                self.pos += 1;
                Ok(())
            }
            Some(b'{') => self.annotation(),
            Some(b'}') => Err("a `}` closes no annotation".to_owned()),
            None | Some(b'.' | b'/' | b')') => {
                Err("`.` and `/` must each stand between two units".to_owned())
            }
            Some(_) => {
                let start = self.pos;
                while let Some(c) = self.peek() {
                    match c {
                        b'.' | b'/' | b'(' | b')' | b'{' | b'}' => break,
                        b'[' => match self.unit[self.pos..].find(']') {
                            Some(close) => self.pos += close + 1,
                            None => return Err("a `[` is never closed".to_owned()),
                        },
                        _ => self.pos += 1,
                    }
                }
                self.symbol(start..self.pos);
                if self.peek() == Some(b'{') {
                    self.annotation()?;
                }
                Ok(())
            }
        }
    }

    /// An annotation, `{` at `pos`: any printable ASCII but braces.
    fn annotation(&mut self) -> Result<(), String> {
        let start = self.pos;
        let inner = &self.unit[start + 1..];
        let close = match inner.find(['{', '}']) {
            Some(at) if inner.as_bytes()[at] == b'}' => at,
            Some(_) => return Err("a `{` opens an annotation inside another".to_owned()),
            None => return Err("a `{` opens an annotation that is never closed".to_owned()),
        };
        self.pos = start + 1 + close + 1;
        let text = &inner[..close];
        if text.bytes().any(|b| b <= b' ' || b == 0x7f) {
            let fixed: String = text
                .chars()
                .map(|c| if c.is_ascii_graphic() { c } else { '_' })
                .collect();
            self.wrong.push(Wrong {
                span: start..self.pos,
                fix: Some(format!("{{{fixed}}}")),
                why: Some(NO_SPACE),
            });
        }
        Ok(())
    }

    /// A number, or an atom with an optional prefix and exponent.
    fn symbol(&mut self, span: Range<usize>) {
        let text = &self.unit[span.clone()];
        if text.bytes().all(|b| b.is_ascii_digit()) {
            return;
        }
        let (atom, exponent) = split_exponent(text);
        if is_unit(atom) {
            return;
        }
        let (fix, why) = match fix(atom) {
            Some(fix) => (Some(format!("{fix}{exponent}")), None),
            None if exponent.is_empty() && bare_word(atom) => {
                (Some(format!("{{{}}}", singular(atom))), Some(COUNTED))
            }
            None => (None, None),
        };
        self.wrong.push(Wrong { span, fix, why });
    }
}

/// `m2` as `m` and `2`, `s-1` as `s` and `-1`, `10*3` as `10*` and `3`.
fn split_exponent(text: &str) -> (&str, &str) {
    let digits = text.len() - text.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return (text, "");
    }
    let mut at = text.len() - digits;
    if text[..at].ends_with(['+', '-']) {
        at -= 1;
    }
    (&text[..at], &text[at..])
}

fn is_unit(atom: &str) -> bool {
    METRIC_ATOMS.contains(&atom)
        || PLAIN_ATOMS.contains(&atom)
        || PREFIXES.iter().any(|prefix| {
            atom.strip_prefix(prefix)
                .is_some_and(|rest| METRIC_ATOMS.contains(&rest))
        })
}

/// A letters-only word other than a unit: what a count is of.
fn bare_word(atom: &str) -> bool {
    atom.len() >= 2 && atom.bytes().all(|b| b.is_ascii_alphabetic())
}

/// The UCUM spelling of a word or abbreviation people write for a unit,
/// then of a unit in the wrong case (`hz`, `kiby`).
fn fix(atom: &str) -> Option<String> {
    let lower = atom.to_ascii_lowercase();
    let known = match lower.as_str() {
        "sec" | "secs" | "second" | "seconds" => "s",
        "msec" | "msecs" | "milli" | "millis" | "millisecond" | "milliseconds" => "ms",
        "usec" | "usecs" | "micros" | "microsecond" | "microseconds" => "us",
        "nsec" | "nsecs" | "nanos" | "nanosecond" | "nanoseconds" => "ns",
        "mins" | "minute" | "minutes" => "min",
        "hr" | "hrs" | "hour" | "hours" => "h",
        "day" | "days" => "d",
        "week" | "weeks" => "wk",
        "month" | "months" => "mo",
        "y" | "yr" | "yrs" | "year" | "years" => "a",
        "byte" | "bytes" => "By",
        "kb" | "kilobyte" | "kilobytes" => "KBy",
        "mb" | "megabyte" | "megabytes" => "MBy",
        "gb" | "gigabyte" | "gigabytes" => "GBy",
        "tb" | "terabyte" | "terabytes" => "TBy",
        "kib" | "kibibyte" | "kibibytes" => "KiBy",
        "mib" | "mebibyte" | "mebibytes" => "MiBy",
        "gib" | "gibibyte" | "gibibytes" => "GiBy",
        "tib" | "tebibyte" | "tebibytes" => "TiBy",
        "bits" => "bit",
        "percent" | "percents" | "percentage" | "pct" => "%",
        "ratio" | "ratios" | "fraction" | "fractions" => "1",
        "celsius" | "degc" => "Cel",
        "kelvin" => "K",
        "hertz" => "Hz",
        "volt" | "volts" => "V",
        "amp" | "amps" | "ampere" | "amperes" => "A",
        "watt" | "watts" => "W",
        "joule" | "joules" => "J",
        "meter" | "meters" | "metre" | "metres" => "m",
        "gram" | "grams" => "g",
        "kilogram" | "kilograms" => "kg",
        _ => "",
    };
    if !known.is_empty() {
        return Some(known.to_owned());
    }
    // Nobody means the bel, which UCUM spells `B`.
    let candidates = PLAIN_ATOMS
        .iter()
        .chain(METRIC_ATOMS)
        .map(|a| (*a).to_owned());
    let prefixed = PREFIXES.iter().flat_map(|prefix| {
        METRIC_ATOMS
            .iter()
            .filter(|a| **a != "B")
            .map(move |a| format!("{prefix}{a}"))
    });
    candidates
        .filter(|a| a != "B")
        .chain(prefixed)
        .find(|candidate| candidate.eq_ignore_ascii_case(atom))
}

/// The singular of a plural word, as annotations are (`{token}`): good
/// enough for a suggestion.
fn singular(word: &str) -> String {
    let word = word.to_ascii_lowercase();
    // `gpus` and `cpus` are plurals, `status` is not.
    let keep = ["status", "bus", "corpus", "series", "species", "news"];
    if word.ends_with("ss") || word.ends_with("is") || keep.contains(&word.as_str()) {
        return word;
    }
    if let Some(stem) = word.strip_suffix("ies").filter(|s| s.len() >= 2) {
        return format!("{stem}y");
    }
    for plural in ["sses", "ches", "shes", "xes"] {
        if word.ends_with(plural) {
            return word[..word.len() - 2].to_owned();
        }
    }
    match word.strip_suffix('s') {
        Some(stem) if stem.len() >= 2 => stem.to_owned(),
        _ => word,
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::unit_problems;

    /// The unit `unit_problems` tells to write instead, panicking when it
    /// refuses `unit` without one or accepts it.
    fn fix(unit: &str) -> String {
        let problems = unit_problems(unit);
        assert_eq!(problems.len(), 1, "{unit}: {problems:?}");
        let (_, rest) = problems[0]
            .split_once("; write `")
            .unwrap_or_else(|| panic!("no fix for {unit}: {}", problems[0]));
        rest.split_once('`').unwrap().0.to_owned()
    }

    #[test]
    fn ucum_units_pass() {
        let valid = [
            "",
            "1",
            "%",
            "s",
            "ms",
            "us",
            "ns",
            "min",
            "h",
            "d",
            "By",
            "KiBy",
            "MiBy",
            "GiBy",
            "TiBy",
            "KBy",
            "MBy",
            "GBy",
            "TBy",
            "kBy",
            "bit",
            "Hz",
            "W",
            "J",
            "Cel",
            "K",
            "A",
            "V",
            "m",
            "g",
            "kg",
            "{token}",
            "{token}/s",
            "{request}",
            "By/s",
            "1/s",
            "/s",
            "{anything.at_all:here-9}",
            "{}",
            "s{wall}",
            "m2",
            "s-1",
            "m+2",
            "m/s2",
            "kW.h",
            "10*3",
            "10*3{cell}",
            "(By/s)/{gpu}",
            "{token}/{request}",
            "mCel",
            "dB",
            "[ppm]",
            "wk",
            "mo",
            "a",
            // Units used across the repo, the built-in sets and Python
            // nemo-lens's parity sets (`MiB` is UCUM's mebibel, read as
            // mebibytes by the exporter and by Python nemo-lens).
            "{generation}",
            "{episode}",
            "{batch}",
            "{block}",
            "{iteration}",
            "{rollout}",
            "{env}",
            "MiB",
            "B",
            "MB",
            "KB",
        ];
        for unit in valid {
            assert_eq!(unit_problems(unit), Vec::<String>::new(), "unit: {unit}");
        }
    }

    #[test]
    fn spelled_out_units_are_refused_with_their_ucum_spelling() {
        let cases = [
            ("seconds", "s"),
            ("second", "s"),
            ("sec", "s"),
            ("secs", "s"),
            ("Seconds", "s"),
            ("millis", "ms"),
            ("milliseconds", "ms"),
            ("msec", "ms"),
            ("microseconds", "us"),
            ("nanoseconds", "ns"),
            ("minutes", "min"),
            ("hours", "h"),
            ("days", "d"),
            ("bytes", "By"),
            ("byte", "By"),
            ("percent", "%"),
            ("pct", "%"),
            ("ratio", "1"),
            ("fraction", "1"),
            ("mib", "MiBy"),
            ("hz", "Hz"),
            ("kiby", "KiBy"),
            ("D", "d"),
            ("meters2", "m2"),
        ];
        for (unit, want) in cases {
            assert_eq!(fix(unit), want, "unit: {unit}");
        }
    }

    #[test]
    fn counted_things_go_in_braces() {
        let cases = [
            ("tokens", "{token}"),
            ("token", "{token}"),
            ("requests", "{request}"),
            ("Requests", "{request}"),
            ("entries", "{entry}"),
            ("batches", "{batch}"),
            ("processes", "{process}"),
            ("status", "{status}"),
            ("{output token}", "{output_token}"),
        ];
        for (unit, want) in cases {
            assert_eq!(fix(unit), want, "unit: {unit}");
        }
    }

    #[test]
    fn compound_units_are_fixed_term_by_term() {
        let cases = [
            ("tokens/s", "{token}/s"),
            ("tokens/sec", "{token}/s"),
            ("bytes/s", "By/s"),
            ("seconds/token", "s/{token}"),
            ("1/seconds", "1/s"),
            ("requests/min", "{request}/min"),
            ("By/seconds", "By/s"),
            ("(bytes/s)/gpus", "(By/s)/{gpu}"),
            ("seconds{wall}", "s{wall}"),
        ];
        for (unit, want) in cases {
            assert_eq!(fix(unit), want, "unit: {unit}");
        }
    }

    #[test]
    fn messages_name_the_unit_and_the_fix() {
        assert_eq!(
            unit_problems("seconds"),
            ["unit `seconds` is not UCUM; write `s`"]
        );
        assert_eq!(
            unit_problems("tokens/s"),
            [
                "unit `tokens/s` is not UCUM; write `{token}/s` (UCUM puts what is counted in \
              braces)"
            ]
        );
        assert_eq!(
            unit_problems("gpu0"),
            [
                "unit `gpu0` is not a UCUM unit; UCUM expects units such as `s`, `ms`, `By`, \
              `KiBy`, `1` or `%`, joined by `.` or `/`, and what is counted in braces, as in \
              `{request}/s`"
            ]
        );
        assert_eq!(
            unit_problems("tokens/per_sec"),
            [
                "unit `tokens/per_sec` is not UCUM: `per_sec` is not a UCUM unit; UCUM expects \
              units such as `s`, `ms`, `By`, `KiBy`, `1` or `%`, joined by `.` or `/`, and what \
              is counted in braces, as in `{request}/s`"
            ]
        );
    }

    #[test]
    fn malformed_units_say_what_is_wrong() {
        let cases = [
            ("{token", "a `{` opens an annotation that is never closed"),
            ("{a{b}}", "a `{` opens an annotation inside another"),
            ("token}", "a `}` closes no annotation"),
            ("s//m", "`.` and `/` must each stand between two units"),
            ("s/", "`.` and `/` must each stand between two units"),
            ("(s/m", "a `(` is never closed"),
            ("s)", "a `)` closes no `(`"),
            (
                "{token}s",
                "`s` must be joined to what comes before it by `.` or `/`",
            ),
            ("[ppm", "a `[` is never closed"),
            ("((((((((((s))))))))))", "parentheses nest more than 8 deep"),
        ];
        for (unit, reason) in cases {
            let problems = unit_problems(unit);
            assert_eq!(problems.len(), 1, "{unit}: {problems:?}");
            assert!(
                problems[0].starts_with(&format!(
                    "unit `{unit}` is not UCUM: {reason}; UCUM expects"
                )),
                "{unit}: {}",
                problems[0]
            );
        }
    }

    #[test]
    fn non_ascii_and_long_units_keep_their_own_message() {
        assert_eq!(
            unit_problems("µs"),
            ["unit `µs` is not ASCII; write UCUM units such as `us` rather than `µs`"]
        );
        let long = format!("{{{}}}", "x".repeat(70));
        assert_eq!(unit_problems(&long).len(), 1);
    }
}
