//! The OpenMetrics 1.0 text exposition, which Prometheus asks for first and
//! which carries exemplars: on histogram `_bucket` lines only, each with
//! its timestamp, ended by `# EOF`.
//!
//! It is the text format (`text::encode_openmetrics` writes it) with
//! OpenMetrics' names: a counter family is named
//! without `_total` (its sample keeps it; a counter whose name lacks it is
//! `unknown`, as is an untyped family), quotes are escaped in HELP, and no
//! `_created` lines are written (Prometheus 2.42 would store each as a
//! series of its own).

use std::fmt::Write as _;
use std::time::UNIX_EPOCH;

use super::escape::{escape_into, push_number};
use super::families::{Family, Kind};
use nemo_lens_core::exemplar::Exemplar;

/// A family's `# TYPE` and `# HELP` lines, in that order, under its
/// OpenMetrics name.
pub(super) fn metadata(out: &mut String, family: &Family) {
    let (name, kind) = match family.kind {
        Kind::Counter => match family.name.strip_suffix("_total") {
            Some(base) => (base, "counter"),
            None => (family.name.as_str(), "unknown"),
        },
        Kind::Gauge => (family.name.as_str(), "gauge"),
        Kind::Histogram => (family.name.as_str(), "histogram"),
        Kind::Summary => (family.name.as_str(), "summary"),
        Kind::Untyped => (family.name.as_str(), "unknown"),
    };
    let _ = writeln!(out, "# TYPE {name} {kind}");
    if !family.help.is_empty() {
        out.push_str("# HELP ");
        out.push_str(name);
        out.push(' ');
        escape_into(out, &family.help, true);
        out.push('\n');
    }
}

/// ` # {trace_id="..",span_id=".."} value timestamp`: 63 characters of
/// labels, within OpenMetrics' 128; the timestamp in seconds to the
/// millisecond Prometheus keeps, always written so a scrape that sees the
/// same exemplar again stores it once.
pub(super) fn push_exemplar(out: &mut String, exemplar: &Exemplar) {
    out.push_str(" # {");
    if let Some(span) = exemplar.span {
        let (trace_id, span_id) = (span.trace_id(), span.span_id());
        let _ = write!(
            out,
            "trace_id=\"{trace_id:032x}\",span_id=\"{span_id:016x}\""
        );
    }
    out.push_str("} ");
    push_number(out, exemplar.value);
    let since = exemplar.time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let _ = write!(out, " {}.{:03}", since.as_secs(), since.subsec_millis());
}
