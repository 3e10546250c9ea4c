//! The rules a declaration must follow, checked at compile time: the
//! OpenTelemetry instrument rules the SDK would otherwise enforce at run time
//! (or not at all), and nemo-lens's own opinions.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Ident;

use crate::ctxt::Ctxt;
use crate::model::{Container, Field, Kind, Measure, Repr, Role, ValueType};

const NAME_MAX: usize = 255;
const UNIT_MAX: usize = 63;
/// Units that say "this is a duration": a gauge keeps only the last one.
const DURATION_UNITS: [&str; 6] = ["ns", "us", "ms", "s", "min", "h"];

/// A declaration that passed every rule, ready to expand.
pub struct Checked<'a> {
    pub container: &'a Container,
    /// Distinct instruments, in order of first declaration.
    pub instruments: Vec<Instrument<'a>>,
    /// Measured fields, in declaration order.
    pub measures: Vec<Measured<'a>>,
    /// `#[attribute]` fields, in declaration order.
    pub attributes: Vec<(&'a Field, &'a crate::model::Attribute)>,
}

/// One OpenTelemetry instrument, shared by every field that names it.
pub struct Instrument<'a> {
    pub name: String,
    pub kind: Kind,
    pub repr: Repr,
    pub unit: String,
    pub description: String,
    pub buckets: Option<Vec<f64>>,
    /// The field that declared it first, for messages.
    pub declared_by: &'a Ident,
}

/// A field recorded into [`Checked::instruments`]`[instrument]`.
pub struct Measured<'a> {
    pub field: &'a Field,
    pub measure: &'a Measure,
    pub value: ValueType,
    pub instrument: usize,
}

impl Measured<'_> {
    pub fn static_attrs(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.measure
            .attrs
            .iter()
            .map(|a| (a.key.value(), a.value.value()))
    }
}

/// Checks `container`, reporting every violation into `cx`.
pub fn check<'a>(cx: &mut Ctxt, container: &'a Container) -> Checked<'a> {
    let mut checked = Checked {
        container,
        instruments: Vec::new(),
        measures: Vec::new(),
        attributes: Vec::new(),
    };
    let mut attribute_keys: Vec<String> = Vec::new();
    for field in &container.fields {
        if let Role::Attribute(attribute) = &field.role {
            let key = attribute.key.value();
            if key.is_empty() {
                cx.error(attribute.key.span(), "attribute keys must not be empty");
            } else if attribute_keys.contains(&key) {
                cx.error(
                    attribute.key.span(),
                    format!("attribute `{key}` is declared twice: keep one field for it"),
                );
            }
            attribute_keys.push(key);
            checked.attributes.push((field, attribute));
        }
    }
    for field in &container.fields {
        if let Role::Measure(measure) = &field.role {
            if let Some(measured) = measured(cx, &mut checked, field, measure, &attribute_keys) {
                checked.measures.push(measured);
            }
        }
    }
    checked
}

fn measured<'a>(
    cx: &mut Ctxt,
    checked: &mut Checked<'a>,
    field: &'a Field,
    measure: &'a Measure,
    attribute_keys: &[String],
) -> Option<Measured<'a>> {
    let (name, name_span) = name(cx, checked.container, field, measure)?;
    check_name(cx, &name, name_span);
    let unit = measure.unit.as_ref().map(|u| u.value()).unwrap_or_default();
    if let Some(lit) = &measure.unit {
        check_unit(cx, &unit, measure.kind, lit.span());
    }
    check_buckets(cx, measure);
    check_static_attrs(cx, measure, attribute_keys);
    let description = description(cx, field, measure);
    let value = value_type(cx, field, measure);

    let (description, value) = (description?, value?);
    let instrument = Instrument {
        name,
        kind: measure.kind,
        repr: value.repr,
        unit,
        description,
        buckets: measure
            .buckets
            .as_ref()
            .map(|b| b.values.iter().map(|(v, _)| *v).collect()),
        declared_by: &field.ident,
    };
    let index = share_or_add(cx, checked, instrument, field, measure, name_span)?;
    Some(Measured {
        field,
        measure,
        value,
        instrument: index,
    })
}

fn name(
    cx: &mut Ctxt,
    container: &Container,
    field: &Field,
    measure: &Measure,
) -> Option<(String, Span)> {
    if let Some(name) = &measure.name {
        return Some((name.value(), name.span()));
    }
    match &container.prefix {
        Some(prefix) => Some((
            format!("{}.{}", prefix.value(), field.ident),
            field.ident.span(),
        )),
        None => {
            cx.error(
                measure.kind_span,
                format!(
                    "field `{0}` has no instrument name: write #[{1}(\"app.{0}\")], or put \
                     #[instruments(prefix = \"app\")] on the struct to name it `app.{0}`",
                    field.ident,
                    measure.kind.attr_name()
                ),
            );
            None
        }
    }
}

/// The OpenTelemetry instrument name rule, as the SDK checks it at run time.
fn check_name(cx: &mut Ctxt, name: &str, span: Span) {
    let problem = if name.is_empty() {
        Some("is empty".to_owned())
    } else if name.len() > NAME_MAX {
        Some(format!(
            "is {} characters long, more than {NAME_MAX}",
            name.len()
        ))
    } else if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        Some("does not start with an ASCII letter".to_owned())
    } else {
        name.chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/')))
            .map(|c| format!("contains {c:?}"))
    };
    if let Some(problem) = problem {
        cx.error(
            span,
            format!(
                "invalid instrument name `{name}`: it {problem}; OpenTelemetry names start with a \
                 letter and use at most {NAME_MAX} of A-Z a-z 0-9 _ . - /"
            ),
        );
    }
}

fn check_unit(cx: &mut Ctxt, unit: &str, kind: Kind, span: Span) {
    if unit.len() > UNIT_MAX {
        cx.error(
            span,
            format!(
                "unit `{unit}` is {} characters long; OpenTelemetry allows at most {UNIT_MAX}",
                unit.len()
            ),
        );
    }
    if !unit.is_ascii() {
        cx.error(
            span,
            format!("unit `{unit}` is not ASCII; write UCUM units such as `us` rather than `µs`"),
        );
    }
    if kind == Kind::Gauge && DURATION_UNITS.contains(&unit) {
        cx.error(
            span,
            format!(
                "a gauge with duration unit `{unit}`: durations belong on a histogram, a gauge \
                 loses the p99; use #[histogram(..)]"
            ),
        );
    }
}

fn check_buckets(cx: &mut Ctxt, measure: &Measure) {
    let Some(buckets) = &measure.buckets else {
        return;
    };
    if measure.kind != Kind::Histogram {
        cx.error(
            buckets.span,
            format!(
                "`buckets` only applies to histograms, and this field is a {}; remove it or make \
                 the field #[histogram(..)]",
                measure.kind.attr_name()
            ),
        );
        return;
    }
    let mut previous: Option<f64> = None;
    for (value, span) in &buckets.values {
        if !value.is_finite() {
            cx.error(*span, "bucket bounds must be finite numbers");
        } else if let Some(before) = previous.filter(|before| value <= before) {
            cx.error(
                *span,
                format!("bucket bounds must be strictly increasing, but {value} follows {before}"),
            );
        }
        previous = Some(*value);
    }
}

fn check_static_attrs(cx: &mut Ctxt, measure: &Measure, attribute_keys: &[String]) {
    let mut seen: Vec<String> = Vec::new();
    for attr in &measure.attrs {
        let key = attr.key.value();
        if key.is_empty() {
            cx.error(attr.key.span(), "attribute keys must not be empty");
        } else if seen.contains(&key) {
            cx.error(
                attr.key.span(),
                format!("attribute `{key}` is set twice on this field"),
            );
        } else if attribute_keys.contains(&key) {
            cx.error(
                attr.key.span(),
                format!(
                    "attribute `{key}` is already an #[attribute] field of the struct; remove one"
                ),
            );
        }
        seen.push(key);
    }
}

fn description(cx: &mut Ctxt, field: &Field, measure: &Measure) -> Option<String> {
    match (&measure.description, &field.doc) {
        (Some(description), _) => Some(description.value()),
        (None, Some(doc)) => Some(doc.clone()),
        (None, None) => {
            cx.error(
                field.ident.span(),
                format!(
                    "field `{}` has no description: add a doc comment (`/// What it measures.`) \
                     or description = \"..\"; it is exported with the metric",
                    field.ident
                ),
            );
            None
        }
    }
}

fn value_type(cx: &mut Ctxt, field: &Field, measure: &Measure) -> Option<ValueType> {
    let ty = &field.inner_ty;
    let Some(value) = measure.value else {
        cx.error(
            ty.span(),
            format!(
                "unsupported value type `{}` for field `{}`: instruments record numbers, one of {}; \
                 to attach text to every measurement, mark the field #[attribute(\"key\")] instead",
                crate::model::display_type(ty),
                field.ident,
                ValueType::SUPPORTED.join(", ")
            ),
        );
        return None;
    };
    let problem = match (measure.kind, value.repr) {
        (Kind::Counter, Repr::I64) => Some(format!(
            "a counter only goes up, but `{}` is signed: use u64 (or f64 for fractional amounts), \
             or #[up_down_counter] for a value that may go down",
            value.rust
        )),
        (Kind::Histogram, Repr::I64) => Some(format!(
            "histograms record u64 or f64, not the signed `{}`: use u64, or f64 if values can be negative",
            value.rust
        )),
        (Kind::UpDownCounter, Repr::U64) => Some(format!(
            "an up_down_counter records i64 or f64, not the unsigned `{}`: use i64, or #[counter] if it only goes up",
            value.rust
        )),
        _ => None,
    };
    match problem {
        Some(problem) => {
            cx.error(ty.span(), problem);
            None
        }
        None => Some(value),
    }
}

/// Finds the instrument this field shares, or adds a new one. Names compare
/// case-insensitively, as the SDK does.
fn share_or_add<'a>(
    cx: &mut Ctxt,
    checked: &mut Checked<'a>,
    instrument: Instrument<'a>,
    field: &Field,
    measure: &Measure,
    name_span: Span,
) -> Option<usize> {
    let existing = checked
        .instruments
        .iter()
        .position(|i| i.name.eq_ignore_ascii_case(&instrument.name));
    let Some(index) = existing else {
        checked.instruments.push(instrument);
        return Some(checked.instruments.len() - 1);
    };
    let first = &checked.instruments[index];
    let mismatch = if first.kind != instrument.kind {
        Some(format!(
            "kind ({} vs {})",
            first.kind.attr_name(),
            instrument.kind.attr_name()
        ))
    } else if first.repr != instrument.repr {
        Some(format!("value type ({:?} vs {:?})", first.repr, instrument.repr).to_lowercase())
    } else if first.unit != instrument.unit {
        Some(format!("unit (`{}` vs `{}`)", first.unit, instrument.unit))
    } else if first.description != instrument.description {
        Some(format!(
            "description (\"{}\" vs \"{}\")",
            first.description, instrument.description
        ))
    } else if first.buckets != instrument.buckets {
        Some("buckets".to_owned())
    } else {
        None
    };
    if let Some(mismatch) = mismatch {
        cx.error(
            name_span,
            format!(
                "instrument `{}` is already declared by field `{}` with a different {mismatch}; \
                 fields that share an instrument must agree on kind, unit, description and buckets \
                 and differ only in attr(..)",
                instrument.name, first.declared_by
            ),
        );
        return None;
    }
    let mut attrs: Vec<_> = measure
        .attrs
        .iter()
        .map(|a| (a.key.value(), a.value.value()))
        .collect();
    attrs.sort();
    let twin = checked.measures.iter().find(|m| {
        let mut other: Vec<_> = m.static_attrs().collect();
        other.sort();
        m.instrument == index && other == attrs
    });
    if let Some(twin) = twin {
        cx.error(
            name_span,
            format!(
                "fields `{}` and `{}` record `{}` with the same attributes, so their values would \
                 mix; tell them apart with attr(\"key\" = \"value\")",
                twin.field.ident, field.ident, instrument.name
            ),
        );
        return None;
    }
    Some(index)
}
