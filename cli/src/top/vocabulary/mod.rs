//! The names each kind of server exports its golden signals under, and how
//! to read them: recognised from the families an endpoint has. What a
//! vocabulary lacks stays absent (`None`), never zero. Each names the
//! release it was read from ([`VOCABULARIES`] in `table.rs`); `nemo-lens
//! top --vocabularies` lists them all, so the next drift is a diff.

mod prefix;
mod table;

pub use prefix::{normalise_dynamo_prefix, DYNAMO_FRONTEND_PREFIX};
pub use table::VOCABULARIES;

use super::exposition::{Exposition, Labels};

/// Which series of a family count.
#[derive(Debug, Clone, Copy)]
pub enum Filter {
    /// All of them.
    All,
    /// Those whose `label` is `value`.
    Is(&'static str, &'static str),
    /// Those whose `label` is set and not empty.
    Set(&'static str),
    /// Those whose `label` starts with the text.
    Starts(&'static str, &'static str),
    /// Those without `label` (or with it empty).
    Unset(&'static str),
    /// Those both filters keep.
    Both(&'static Filter, &'static Filter),
}

impl Filter {
    /// Whether a series with `labels` counts.
    pub fn keeps(self, labels: &Labels) -> bool {
        match self {
            Filter::All => true,
            Filter::Is(label, value) => labels.get(label).is_some_and(|v| v == value),
            Filter::Set(label) => labels.get(label).is_some_and(|v| !v.is_empty()),
            Filter::Starts(label, prefix) => {
                labels.get(label).is_some_and(|v| v.starts_with(prefix))
            }
            Filter::Unset(label) => labels.get(label).is_none_or(String::is_empty),
            Filter::Both(a, b) => a.keeps(labels) && b.keeps(labels),
        }
    }
}

/// Where one number comes from: alternatives, the first the endpoint has.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A gauge or counter family's samples.
    Number(&'static str, Filter),
    /// A histogram family's observation count.
    Count(&'static str, Filter),
    /// A histogram family's sum (tokens recorded per request).
    Sum(&'static str, Filter),
}

impl Source {
    /// The family it reads.
    pub fn family(self) -> &'static str {
        match self {
            Source::Number(f, _) | Source::Count(f, _) | Source::Sum(f, _) => f,
        }
    }
}

/// One server kind's names.
#[derive(Debug)]
pub struct Vocabulary {
    /// Shown in the view.
    pub name: &'static str,
    /// The release the names were read from, and the older releases whose
    /// names are kept as fallbacks.
    pub release: &'static str,
    /// A family only this kind exports: its presence picks the vocabulary.
    pub marks: &'static [&'static str],
    /// The label that tells engines or data-parallel ranks apart within
    /// one endpoint.
    pub replica_label: Option<&'static str>,
    /// Requests running.
    pub running: &'static [Source],
    /// Requests waiting.
    pub waiting: &'static [Source],
    /// A fraction, 0 to 1.
    pub kv_cache: &'static [Source],
    /// Requests finished, a counter.
    pub requests: &'static [Source],
    /// Requests failed, a counter.
    pub errors: &'static [Source],
    /// Requests refused before they started (a full queue), counters
    /// counted apart from `requests`: every one present is added to both
    /// requests and errors.
    pub rejected: &'static [Source],
    /// Input tokens, a counter.
    pub input_tokens: &'static [Source],
    /// Output tokens, a counter.
    pub output_tokens: &'static [Source],
    /// Histograms, in seconds.
    pub ttft: &'static [&'static str],
    /// Time per output token (or between tokens).
    pub tpot: &'static [&'static str],
}

/// The vocabulary of `exposition`, if any is recognised (a Dynamo
/// frontend under a renamed prefix is read after
/// [`normalise_dynamo_prefix`]).
pub fn recognise(exposition: &Exposition) -> Option<&'static Vocabulary> {
    VOCABULARIES
        .iter()
        .find(|v| v.marks.iter().any(|m| exposition.has(m)))
}

impl Filter {
    fn describe(self) -> String {
        match self {
            Filter::All => String::new(),
            Filter::Is(label, value) => format!("{{{label}=\"{value}\"}}"),
            Filter::Set(label) => format!("{{{label}!=\"\"}}"),
            Filter::Starts(label, prefix) => format!("{{{label}=~\"{prefix}.*\"}}"),
            Filter::Unset(label) => format!("{{{label}=\"\"}}"),
            Filter::Both(a, b) => {
                let (a, b) = (a.describe(), b.describe());
                let inner = |d: &str| d.trim_matches(['{', '}']).to_owned();
                format!("{{{},{}}}", inner(&a), inner(&b))
            }
        }
    }
}

impl Source {
    /// The family and filter, as PromQL would select them.
    pub fn describe(self) -> String {
        match self {
            Source::Number(f, filter) => format!("{f}{}", filter.describe()),
            Source::Count(f, filter) => format!("{f}_count{}", filter.describe()),
            Source::Sum(f, filter) => format!("{f}_sum{}", filter.describe()),
        }
    }
}

impl Vocabulary {
    /// Every name it reads, signal by signal, alternatives in the order
    /// tried: what `nemo-lens top --vocabularies` prints.
    pub fn describe(&self) -> String {
        let mut out = format!("{} ({})\n", self.name, self.release);
        let marks = self.marks.join(", ");
        out += &format!("  recognised by: {marks}\n");
        if let Some(label) = self.replica_label {
            out += &format!("  replicas by: {label}\n");
        }
        let numbers: [(&str, &[Source]); 8] = [
            ("running", self.running),
            ("waiting", self.waiting),
            ("kv cache", self.kv_cache),
            ("requests", self.requests),
            ("errors", self.errors),
            ("rejected (requests and errors)", self.rejected),
            ("input tokens", self.input_tokens),
            ("output tokens", self.output_tokens),
        ];
        for (signal, sources) in numbers {
            let names: Vec<String> = sources.iter().map(|s| s.describe()).collect();
            out += &format!("  {signal}: {}\n", or_none(&names));
        }
        for (signal, families) in [("ttft", self.ttft), ("tpot", self.tpot)] {
            let names: Vec<String> = families.iter().map(|f| (*f).to_owned()).collect();
            out += &format!("  {signal}: {}\n", or_none(&names));
        }
        out
    }
}

fn or_none(names: &[String]) -> String {
    if names.is_empty() {
        "—".to_owned()
    } else {
        names.join(", then ")
    }
}
