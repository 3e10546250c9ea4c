//! The rules a declaration must follow, checked at compile time: the
//! OpenTelemetry instrument rules the SDK would otherwise enforce at run time
//! (or not at all), and nemo-lens's own opinions. The result is the
//! [`checked`](crate::checked) model.

use nemo_lens_naming::rules;
use quote::ToTokens;
use syn::LitStr;

use crate::checked::{Attached, Checked, Flattened, Instrument, Measured};
use crate::ctxt::Ctxt;
use crate::kind::{Aggregation, FieldType, InstrumentKind, ValueType};
use crate::messages;
use crate::model::{Container, Field, GateDecl, GateKind, InstrumentDecl, Only, Role};

/// Checks `container`, reporting every violation into `cx`.
pub fn check<'a>(cx: &mut Ctxt, container: &'a Container) -> Checked<'a> {
    let mut checked = Checked {
        container,
        instruments: Vec::new(),
        measures: Vec::new(),
        attributes: Vec::new(),
        flattened: Vec::new(),
    };
    let measured_fields: Vec<String> = container
        .fields
        .iter()
        .filter(|f| matches!(f.role, Role::Instruments(_)))
        .map(|f| f.ident.to_string())
        .collect();
    let mut struct_keys: Vec<String> = Vec::new();
    for field in &container.fields {
        if let Role::Attribute(decl) = &field.role {
            attribute_key(cx, &decl.key, &mut struct_keys, &[]);
            check_only_fields(cx, decl.only.as_deref(), &measured_fields);
            checked.attributes.push(Attached { field, decl });
        }
        if let Role::Flatten(decl) = &field.role {
            check_only_fields(cx, decl.only.as_deref(), &measured_fields);
            checked.flattened.push(Flattened { field, decl });
        }
    }
    for field in &container.fields {
        if let Role::Instruments(decls) = &field.role {
            for decl in decls {
                if let Some(measured) = measured(cx, &mut checked, field, decl, &struct_keys) {
                    checked.measures.push(measured);
                }
            }
        }
    }
    check_only_instruments(cx, &checked);
    check_guard(cx, container);
    check_observe(cx, container);
    checked
}

/// An observed set reports what a source returns at each collection, which
/// gauges and sums can (a last value, a running total) and a histogram
/// cannot: its distribution is of the values recorded between collections.
fn check_observe(cx: &mut Ctxt, container: &Container) {
    let Some(observe) = &container.observe else {
        return;
    };
    for field in &container.fields {
        let Role::Instruments(decls) = &field.role else {
            continue;
        };
        for decl in decls.iter().filter(|d| d.kind == InstrumentKind::Histogram) {
            cx.error(
                &decl.kind_path,
                format!(
                    "`{}` is a histogram, which `observe` cannot report: an observed set reports \
                     the values its source returns at each collection (a gauge's last value, a \
                     counter's running total), and a histogram is the distribution of the values \
                     recorded in between; record it with `record`, in a set without `observe`",
                    field.ident
                ),
            );
        }
    }
    if container.guard.is_some() {
        cx.error(
            observe,
            "a set is either observed (its source reports the values) or guarded (its guard \
             records them); declare two sets",
        );
    }
}

/// The keys a guard reads (`elapsed`, `in_flight`, `on_drop`, `error_type`)
/// are where the guard can honour them, and a guard has something to do.
fn check_guard(cx: &mut Ctxt, container: &Container) {
    let guard = container.guard.is_some();
    let mut lifecycle = false;
    let mut error_type: Option<&syn::Ident> = None;
    let needs_guard = |what: &str| {
        format!("`{what}` is set by the guard: add #[instruments(guard)] to the struct")
    };
    for field in &container.fields {
        match &field.role {
            Role::Instruments(decls) => {
                for decl in decls {
                    if let Some(flag) = &decl.elapsed {
                        lifecycle = true;
                        let duration = decl.field_type.is_some_and(|t| t.duration && !t.repeated);
                        if decl.kind != InstrumentKind::Histogram || !duration {
                            cx.error(
                                flag,
                                format!(
                                    "`elapsed` is the time from the guard's start to its end: it \
                                     goes on a #[histogram(.., unit = \"s\")] of an \
                                     `Option<Duration>` field, and `{}` is a {} of `{}`",
                                    field.ident,
                                    decl.kind.attr_name(),
                                    messages::display_type(&field.inner_ty)
                                ),
                            );
                        } else if !guard {
                            cx.error(flag, needs_guard("elapsed"));
                        }
                    }
                    if let Some(flag) = &decl.in_flight {
                        lifecycle = true;
                        if decl.kind != InstrumentKind::UpDownCounter {
                            cx.error(
                                flag,
                                format!(
                                    "`in_flight` adds 1 at the guard's start and takes it back at \
                                     its end, which only an #[up_down_counter] can; `{}` is a {}",
                                    field.ident,
                                    decl.kind.attr_name()
                                ),
                            );
                        } else if !guard {
                            cx.error(flag, needs_guard("in_flight"));
                        }
                    }
                }
            }
            Role::Attribute(decl) => {
                if let (Some(value), false) = (&decl.on_drop, guard) {
                    cx.error(value, needs_guard("on_drop"));
                }
                if let (Some(value), None, true) = (
                    &decl.on_drop,
                    &decl.error_type,
                    decl.key.value() == "error.type",
                ) {
                    cx.error(
                        value,
                        format!(
                            "`error.type` has an `on_drop` value but is not marked `error_type`, \
                             so the guard has no `fail(e)` to set it when the work fails: write #[attribute(\"error.type\", error_type, on_drop = \
                             {})]",
                            value.to_token_stream()
                        ),
                    );
                }
                if let (Some(flag), Some(default)) = (&decl.required, &decl.default) {
                    cx.error(
                        flag,
                        format!(
                            "`{}` has a default ({:?}), so it is never missing: remove \
                             `required` or the default",
                            decl.key.value(),
                            default.value()
                        ),
                    );
                }
                if let Some(flag) = &decl.error_type {
                    if !guard {
                        cx.error(flag, needs_guard("error_type"));
                    } else if let Some(first) = error_type {
                        cx.error(
                            flag,
                            format!(
                                "field `{first}` is already the `error_type` attribute that \
                                 `fail(e)` sets: a guard fails with one error type; keep one",
                            ),
                        );
                    } else {
                        error_type = Some(&field.ident);
                    }
                }
            }
            Role::Flatten(_) => {}
        }
    }
    if let (Some(flag), false) = (&container.guard, lifecycle) {
        cx.error(
            flag,
            "a guard times or counts what it guards: mark an `Option<Duration>` histogram \
             `elapsed` or an up_down_counter `in_flight`, or remove `guard`",
        );
    }
}

/// One place for the attribute-key rules, for `#[attribute]` fields and for
/// `attr(..)` pairs alike: not empty, not repeated in `seen`, not one of
/// `struct_keys` (the struct's `#[attribute]` keys, when checking a pair).
pub(crate) fn attribute_key(
    cx: &mut Ctxt,
    key: &LitStr,
    seen: &mut Vec<String>,
    struct_keys: &[String],
) {
    let value = key.value();
    if value.is_empty() {
        cx.error(key, "attribute keys must not be empty");
    } else if seen.contains(&value) {
        cx.error(
            key,
            format!("attribute `{value}` is declared twice here: keep one"),
        );
    } else if struct_keys.contains(&value) {
        cx.error(
            key,
            format!(
                "attribute `{value}` is already an #[attribute] field of the struct; remove one"
            ),
        );
    }
    seen.push(value);
}

/// The fields `only(..)` names are measured fields of the struct, each
/// named once.
fn check_only_fields(cx: &mut Ctxt, only: Option<&[Only]>, measured_fields: &[String]) {
    let Some(only) = only else { return };
    let candidates: Vec<&str> = measured_fields.iter().map(String::as_str).collect();
    let mut seen: Vec<String> = Vec::new();
    for ident in only.iter().filter_map(|o| match o {
        Only::Field(ident) => Some(ident),
        Only::Instrument(_) => None,
    }) {
        let name = ident.to_string();
        if seen.contains(&name) {
            cx.error(ident, format!("field `{name}` is listed twice in only(..)"));
        } else if !measured_fields.contains(&name) {
            cx.error(
                ident,
                messages::unknown("measured field in only(..)", &name, &candidates),
            );
        }
        seen.push(name);
    }
}

/// The instruments `only(..)` names are declared by the struct, each named
/// once; checked once every instrument is known.
fn check_only_instruments(cx: &mut Ctxt, checked: &Checked) {
    let declared: Vec<&str> = checked
        .instruments
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    let scopes = checked
        .attributes
        .iter()
        .map(|a| &a.decl.only)
        .chain(checked.flattened.iter().map(|g| &g.decl.only));
    for only in scopes {
        let Some(only) = only else {
            continue;
        };
        let mut seen: Vec<String> = Vec::new();
        for literal in only.iter().filter_map(|o| match o {
            Only::Instrument(literal) => Some(literal),
            Only::Field(_) => None,
        }) {
            let name = literal.value();
            if seen.iter().any(|s| s.eq_ignore_ascii_case(&name)) {
                cx.error(
                    literal,
                    format!("instrument `{name}` is listed twice in only(..)"),
                );
            } else if !declared.iter().any(|d| d.eq_ignore_ascii_case(&name)) {
                cx.error(
                    literal,
                    messages::unknown("instrument in only(..)", &name, &declared),
                );
            }
            seen.push(name);
        }
    }
}

/// Whether `only` (of an attribute) attaches it to `field`'s measurements
/// of `instrument`.
fn attaches(only: Option<&[Only]>, field: &Field, instrument: &str) -> bool {
    only.is_none_or(|only| {
        only.iter().any(|target| match target {
            Only::Field(ident) => *ident == field.ident,
            Only::Instrument(name) => name.value().eq_ignore_ascii_case(instrument),
        })
    })
}

/// An opt-in value as `OTEL_SEMCONV_STABILITY_OPT_IN` lists it: one entry,
/// without the `/dup` that only the variable's reader chooses.
fn check_gate(cx: &mut Ctxt, gate: &GateDecl) {
    let value = gate.value.value();
    let problem = if value.is_empty() {
        Some("is empty")
    } else if value.ends_with("/dup") {
        Some("ends in `/dup`, which the setting chooses (record both), not the declaration")
    } else if value.contains(',') {
        Some("contains a comma, which separates entries of OTEL_SEMCONV_STABILITY_OPT_IN")
    } else if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        Some("has characters other than ASCII letters, digits, `_`, `-` and `.`")
    } else {
        None
    };
    if let Some(problem) = problem {
        cx.error(
            &gate.value,
            format!(
                "opt-in value `{value}` {problem}; write one value of \
                 OTEL_SEMCONV_STABILITY_OPT_IN, e.g. {} = \"gen_ai_latest_experimental\"",
                gate.kind.key()
            ),
        );
    }
}

fn measured<'a>(
    cx: &mut Ctxt,
    checked: &mut Checked<'a>,
    field: &'a Field,
    decl: &'a InstrumentDecl,
    struct_keys: &[String],
) -> Option<Measured<'a>> {
    let name = name(cx, checked.container, field, decl)?;
    check_name(cx, &name.0, &name.1);
    if let Some(unit) = &decl.unit {
        check_unit(cx, &unit.value(), decl.kind, unit);
    }
    check_buckets(cx, decl);
    let aggregation = aggregation(cx, decl);
    if let Some(gate) = &decl.gate {
        check_gate(cx, gate);
    }
    let mut seen = Vec::new();
    for attr in &decl.attrs {
        attribute_key(cx, &attr.key, &mut seen, struct_keys);
    }
    let field_type = field_type(cx, field, decl);
    let shared = checked
        .instruments
        .iter()
        .position(|i| i.name.eq_ignore_ascii_case(&name.0));
    let index = match shared {
        Some(index) => share(cx, checked, index, field, decl, field_type?, &name)?,
        None => {
            let unit = decl.unit.as_ref().map(LitStr::value).unwrap_or_default();
            check_unit_in_name(cx, &name, &unit, decl);
            let description = description(cx, field, decl);
            checked.instruments.push(Instrument {
                name: name.0,
                kind: decl.kind,
                value: field_type?.value,
                unit: decl.unit.as_ref().map(LitStr::value).unwrap_or_default(),
                description: description?,
                buckets: buckets(decl),
                unit_in_name: decl.unit_in_name.is_some(),
                gate: gate(decl),
                aggregation,
                declared_by: &field.ident,
            });
            checked.instruments.len() - 1
        }
    };
    if let Some(field_type) = field_type.filter(|t| t.duration) {
        check_duration_unit(cx, field, decl, &checked.instruments[index], field_type);
    }
    let instrument = &checked.instruments[index].name;
    let attributes: Vec<usize> = checked
        .attributes
        .iter()
        .enumerate()
        .filter(|(_, a)| attaches(a.decl.only.as_deref(), field, instrument))
        .map(|(i, _)| i)
        .collect();
    let flattened: Vec<usize> = checked
        .flattened
        .iter()
        .enumerate()
        .filter(|(_, g)| attaches(g.decl.only.as_deref(), field, instrument))
        .map(|(i, _)| i)
        .collect();
    if let Some(flag) = &decl.start_at_zero {
        check_start_at_zero(cx, checked, decl, flag, instrument, &attributes);
    }
    if decl.in_flight.is_some() {
        check_in_flight_attributes(cx, checked, field, &attributes);
    }
    Some(Measured {
        field,
        decl,
        field_type: field_type?,
        instrument: index,
        attributes,
        flattened,
    })
}

/// The instrument name and the node it comes from (the literal, or the
/// field name it was derived from).
fn name(
    cx: &mut Ctxt,
    container: &Container,
    field: &Field,
    decl: &InstrumentDecl,
) -> Option<(String, proc_macro2::TokenStream)> {
    if let Some(name) = &decl.name {
        return Some((name.value(), name.to_token_stream()));
    }
    match &container.prefix {
        Some(prefix) => Some((
            format!("{}.{}", prefix.value(), field.ident),
            field.ident.to_token_stream(),
        )),
        None => {
            cx.error(
                &decl.kind_path,
                format!(
                    "field `{0}` has no instrument name: write #[{1}(\"app.{0}\")], or put \
                     #[instruments(prefix = \"app\")] on the struct to name it `app.{0}`",
                    field.ident,
                    decl.kind.attr_name()
                ),
            );
            None
        }
    }
}

/// The OpenTelemetry instrument name rule, as the SDK checks it at run time.
fn check_name(cx: &mut Ctxt, name: &str, node: impl ToTokens) {
    if let Some(problem) = rules::name_problem(name) {
        cx.error(node, problem);
    }
}

fn check_unit(cx: &mut Ctxt, unit: &str, kind: InstrumentKind, node: &LitStr) {
    for problem in rules::unit_problems(unit) {
        cx.error(node, problem);
    }
    if kind == InstrumentKind::Gauge
        && let Some(problem) = rules::duration_on_gauge(unit)
    {
        cx.error(node, format!("{problem}; use #[histogram(..)]"));
    }
}

/// The Prometheus exporter appends the unit to the name
/// (`rl.generation.duration_ms` with `ms` is scraped as
/// `rl_generation_duration_ms_milliseconds`), so a name that spells its unit
/// ends up spelling it twice. It is an error unless the declaration says
/// `unit_in_name`, for names that must stay as they are on the wire; a
/// `unit_in_name` the name does not need is an error too, so the opt-out
/// cannot go stale.
fn check_unit_in_name(
    cx: &mut Ctxt,
    (name, name_node): &(String, proc_macro2::TokenStream),
    unit: &str,
    decl: &InstrumentDecl,
) {
    let counter = decl.kind == InstrumentKind::Counter;
    match (rules::spelled_unit(name, unit, counter), &decl.unit_in_name) {
        (Some(spelled), None) => {
            let kind = decl.kind.attr_name();
            let series = match decl.kind {
                InstrumentKind::Histogram => " (`_bucket`, `_sum`, `_count`)",
                _ => "",
            };
            cx.error(
                name_node,
                format!(
                    "instrument name `{name}` already spells its unit `{unit}`, and the \
                     Prometheus exporter appends the unit: it would be scraped as `{}`{series}. \
                     Name it `{}` (scraped as `{}`), or, when the name must stay as it is on the \
                     wire (an existing dashboard, parity with another implementation), say so with \
                     `unit_in_name`: #[{kind}(\"{name}\", unit = \"{unit}\", unit_in_name)]",
                    spelled.scraped, spelled.fixed, spelled.fixed_scraped
                ),
            );
        }
        (None, Some(flag)) => cx.error(
            flag,
            format!(
                "`unit_in_name` is not needed: `{name}` does not spell its unit{}, it is scraped as \
                 `{}`; remove it",
                if unit.is_empty() { String::new() } else { format!(" `{unit}`") },
                rules::prometheus_family(name, unit, counter)
            ),
        ),
        _ => {}
    }
}

fn check_buckets(cx: &mut Ctxt, decl: &InstrumentDecl) {
    let Some(buckets) = &decl.buckets else {
        return;
    };
    if decl.kind != InstrumentKind::Histogram {
        cx.error(
            &buckets.tokens,
            format!(
                "`buckets` only applies to histograms, and this field is a {}; remove it or make \
                 the field #[histogram(..)]",
                decl.kind.attr_name()
            ),
        );
        return;
    }
    let bounds: Vec<f64> = buckets.values.iter().map(|(value, _)| *value).collect();
    for (index, problem) in rules::bucket_problems(&bounds) {
        cx.error(&buckets.values[index].1, problem);
    }
}

/// The aggregation `aggregation = ".."` pins: a histogram's, one of the
/// names the OpenTelemetry variable takes, and not exponential buckets
/// with explicit ones.
fn aggregation(cx: &mut Ctxt, decl: &InstrumentDecl) -> Option<Aggregation> {
    let literal = decl.aggregation.as_ref()?;
    if decl.kind != InstrumentKind::Histogram {
        cx.error(
            literal,
            format!(
                "`aggregation` only applies to histograms, and this field is a {}; remove it",
                decl.kind.attr_name()
            ),
        );
        return None;
    }
    let Some(aggregation) = Aggregation::from_name(&literal.value()) else {
        let names: Vec<&str> = Aggregation::ALL.iter().map(|a| a.name()).collect();
        cx.error(
            literal,
            messages::unknown("aggregation", &literal.value(), &names),
        );
        return None;
    };
    if let (Aggregation::Base2Exponential, Some(buckets)) = (aggregation, &decl.buckets) {
        cx.error(
            &buckets.tokens,
            "explicit `buckets` and exponential aggregation exclude each other: exponential \
             buckets follow the data; remove one",
        );
    }
    Some(aggregation)
}

fn gate(decl: &InstrumentDecl) -> Option<(GateKind, String)> {
    decl.gate.as_ref().map(|g| (g.kind, g.value.value()))
}

fn buckets(decl: &InstrumentDecl) -> Option<Vec<f64>> {
    decl.buckets
        .as_ref()
        .map(|b| b.values.iter().map(|(v, _)| *v).collect())
}

fn description(cx: &mut Ctxt, field: &Field, decl: &InstrumentDecl) -> Option<String> {
    match (&decl.description, &field.doc) {
        (Some(description), _) => Some(description.value()),
        (None, Some(doc)) => Some(doc.clone()),
        (None, None) => {
            cx.error(
                &field.ident,
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

/// `start_at_zero` creates one series per combination of the measure's
/// attribute values, so it needs a sum (a gauge or histogram at 0 would be a
/// made-up measurement) and attributes with a fixed set of values. Types
/// known to be free-form are refused here, naming the attribute; any other
/// type must implement `FixedAttributeValue`, which the expansion requires.
fn check_start_at_zero(
    cx: &mut Ctxt,
    checked: &Checked,
    decl: &InstrumentDecl,
    flag: &syn::Ident,
    instrument: &str,
    attributes: &[usize],
) {
    if !matches!(
        decl.kind,
        InstrumentKind::Counter | InstrumentKind::UpDownCounter
    ) {
        cx.error(
            flag,
            format!(
                "`start_at_zero` is for counters and up_down_counters, not a {}: a sum at 0 is \
                 true before the first event, but a {} at 0 would be a measurement that never \
                 happened; remove it",
                decl.kind.attr_name(),
                decl.kind.attr_name()
            ),
        );
        return;
    }
    for &a in attributes {
        let attached = &checked.attributes[a];
        if let Some(ty) = free_form(&attached.field.inner_ty) {
            cx.error(
                flag,
                format!(
                    "`start_at_zero` creates one series of `{instrument}` per combination of its \
                     attribute values, but attribute `{}` (field `{}`) is a `{ty}`, which has no \
                     fixed set of values: make it an enum deriving `AttributeValue`, leave it off \
                     this instrument with `only(..)`, or remove `start_at_zero`",
                    attached.key(),
                    attached.field.ident
                ),
            );
        }
    }
}

/// An `in_flight` count goes up and comes back with the attributes as they
/// are at the guard's start, so it cannot carry one that is set only at the
/// end: without this rule the +1 and the -1 would land on different series.
fn check_in_flight_attributes(
    cx: &mut Ctxt,
    checked: &Checked,
    field: &Field,
    attributes: &[usize],
) {
    for &a in attributes {
        let attached = &checked.attributes[a];
        let end_only = match (&attached.decl.error_type, &attached.decl.on_drop) {
            (Some(flag), _) => Some((flag.to_token_stream(), "error_type")),
            (None, Some(value)) => Some((value.to_token_stream(), "on_drop")),
            (None, None) => None,
        };
        if let Some((node, what)) = end_only {
            cx.error(
                node,
                format!(
                    "attribute `{}` is set when the guard ends (`{what}`), but the `in_flight` \
                     count `{}` goes up at the start and comes back with the attributes it went \
                     up with: leave it off the count with `only(..)` naming the fields recorded \
                     at the end",
                    attached.key(),
                    field.ident
                ),
            );
        }
    }
}

/// The name of a type known to take any value (text and numbers), as written.
fn free_form(ty: &syn::Type) -> Option<String> {
    let text = messages::display_type(ty);
    let last = text
        .rsplit("::")
        .next()
        .unwrap_or(&text)
        .trim_start_matches('&');
    let base = last.split('<').next().unwrap_or(last).trim();
    let free = [
        "String",
        "str",
        "'static str",
        "Cow",
        "Arc",
        "Rc",
        "Box",
        "StringValue",
        "f64",
        "f32",
        "u64",
        "u32",
        "u16",
        "u8",
        "usize",
        "i64",
        "i32",
        "i16",
        "i8",
        "isize",
    ];
    free.contains(&base).then_some(text)
}

/// A `Duration` is converted to the instrument's unit, which must be one.
fn check_duration_unit(
    cx: &mut Ctxt,
    field: &Field,
    decl: &InstrumentDecl,
    instrument: &Instrument,
    field_type: FieldType,
) {
    if nemo_lens_naming::nanos_per(&instrument.unit).is_some() {
        return;
    }
    let units = nemo_lens_naming::DURATION_UNITS.join("`, `");
    let message = if instrument.unit.is_empty() {
        format!(
            "field `{}` is a `{}`, recorded in the instrument's unit, and `{}` declares none: add \
             one of `{units}`, e.g. unit = \"s\"",
            field.ident,
            messages::display_type(&field.inner_ty),
            instrument.name
        )
    } else {
        format!(
            "field `{}` is a `{}`, recorded in the instrument's unit, but `{}` is not a duration \
             unit: use one of `{units}`, or make the field a number (`f64`) in `{}`",
            field.ident, field_type.rust, instrument.unit, instrument.unit
        )
    };
    match &decl.unit {
        Some(unit) => cx.error(unit, message),
        None => cx.error(&field.inner_ty, message),
    }
}

fn field_type(cx: &mut Ctxt, field: &Field, decl: &InstrumentDecl) -> Option<FieldType> {
    let ty = &field.inner_ty;
    let Some(field_type) = decl.field_type else {
        cx.error(
            ty,
            format!(
                "unsupported value type `{}` for field `{}`: instruments record numbers, one of {} \
                 (a histogram also takes a `Duration`, and a `Vec` of either); to attach text to \
                 every measurement, mark the field #[attribute(\"key\")] instead",
                messages::display_type(ty),
                field.ident,
                FieldType::SUPPORTED[..FieldType::SUPPORTED.len() - 1].join(", ")
            ),
        );
        return None;
    };
    let gauge_with_duration_unit = decl.kind == InstrumentKind::Gauge
        && decl
            .unit
            .as_ref()
            .is_some_and(|u| nemo_lens_naming::nanos_per(&u.value()).is_some());
    if field_type.duration && gauge_with_duration_unit {
        // The duration-unit-on-a-gauge rule says it already, on the unit.
        return None;
    }
    if field_type.duration && decl.kind != InstrumentKind::Histogram {
        cx.error(
            ty,
            format!(
                "a `Duration` belongs on a histogram, not {} {}: {}; make it \
                 #[histogram(\"name\", unit = \"s\")] (or \"ms\", ..), or record a number",
                if decl.kind == InstrumentKind::UpDownCounter { "an" } else { "a" },
                decl.kind.attr_name(),
                match decl.kind {
                    InstrumentKind::Gauge => "a gauge keeps only the last value and loses the percentiles",
                    _ => "a sum of durations is a histogram's `_sum`, which comes with the count and the percentiles",
                }
            ),
        );
        return None;
    }
    if field_type.repeated && decl.kind != InstrumentKind::Histogram {
        cx.error(
            ty,
            format!(
                "a {} records one value per record, and `{}` holds several; only a histogram \
                 takes a `Vec` (each value is recorded), so make the field `Option<{}>` or the \
                 instrument #[histogram(..)]",
                decl.kind.attr_name(),
                messages::display_type(ty),
                field_type.rust
            ),
        );
        return None;
    }
    let problem = match (decl.kind, field_type.value) {
        (InstrumentKind::Counter, ValueType::I64) => Some(format!(
            "a counter only goes up, but `{}` is signed: use u64 (or f64 for fractional amounts), \
             or #[up_down_counter] for a value that may go down",
            field_type.rust
        )),
        (InstrumentKind::Histogram, ValueType::I64) => Some(format!(
            "histograms record u64 or f64, not the signed `{}`: use u64, or f64 if values can be negative",
            field_type.rust
        )),
        (InstrumentKind::UpDownCounter, ValueType::U64) => Some(format!(
            "an up_down_counter records i64 or f64, not the unsigned `{}`: use i64, or #[counter] if it only goes up",
            field_type.rust
        )),
        _ => None,
    };
    match problem {
        Some(problem) => {
            cx.error(ty, problem);
            None
        }
        None => Some(field_type),
    }
}

/// A field naming an instrument declared before it: what it leaves out is
/// taken from the first declaration, what it states must agree with it, and
/// its attributes must tell it apart from every other field of the
/// instrument. Names compare case-insensitively, as the SDK does.
fn share(
    cx: &mut Ctxt,
    checked: &Checked,
    index: usize,
    field: &Field,
    decl: &InstrumentDecl,
    field_type: FieldType,
    (name, name_node): &(String, proc_macro2::TokenStream),
) -> Option<usize> {
    let first = &checked.instruments[index];
    let stated = |lit: &Option<LitStr>| lit.as_ref().map(LitStr::value);
    let mismatch = if first.kind != decl.kind {
        Some(format!(
            "kind ({} vs {})",
            first.kind.attr_name(),
            decl.kind.attr_name()
        ))
    } else if first.value != field_type.value {
        Some(format!(
            "value type ({} vs {})",
            first.value.primitive(),
            field_type.value.primitive()
        ))
    } else if let Some(unit) = stated(&decl.unit).filter(|u| *u != first.unit) {
        Some(format!("unit (`{}` vs `{unit}`)", first.unit))
    } else if let Some(description) = stated(&decl.description).filter(|d| *d != first.description)
    {
        Some(format!(
            "description (\"{}\" vs \"{description}\")",
            first.description
        ))
    } else if buckets(decl).is_some_and(|b| Some(b) != first.buckets) {
        Some("buckets".to_owned())
    } else if let Some(aggregation) = decl
        .aggregation
        .as_ref()
        .map(|a| Aggregation::from_name(&a.value()))
        .filter(|a| *a != first.aggregation)
    {
        Some(format!(
            "aggregation ({} vs {})",
            first.aggregation.map_or("the default", Aggregation::name),
            aggregation.map_or("an unknown one", Aggregation::name)
        ))
    } else if let Some((kind, value)) = gate(decl).filter(|g| Some(g) != first.gate.as_ref()) {
        Some(format!(
            "semantic-convention gate (`{} = \"{value}\"`)",
            kind.key()
        ))
    } else {
        None
    };
    if let Some(flag) = decl.unit_in_name.as_ref().filter(|_| !first.unit_in_name) {
        cx.error(
            flag,
            format!(
                "`unit_in_name` belongs on field `{}`, which declares instrument `{name}`; a \
                 field sharing the instrument may repeat it, not add it",
                first.declared_by
            ),
        );
        return None;
    }
    if let Some(mismatch) = mismatch {
        cx.error(
            name_node,
            format!(
                "instrument `{name}` is already declared by field `{}` with a different {mismatch}; \
                 a field that shares an instrument states only its attr(..), or repeats exactly \
                 what the first declaration says",
                first.declared_by
            ),
        );
        return None;
    }
    let mut attrs: Vec<_> = decl
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
    let again = checked
        .measures
        .iter()
        .any(|m| m.instrument == index && m.field.ident == field.ident);
    if again {
        cx.error(
            name_node,
            format!(
                "field `{}` declares instrument `{name}` twice; a field records once into each \
                 instrument it names, so remove one",
                field.ident
            ),
        );
        return None;
    }
    if let Some(twin) = twin {
        cx.error(
            name_node,
            format!(
                "fields `{}` and `{}` record `{}` with the same attributes, so their values would \
                 mix; tell them apart with attr(\"key\" = \"value\")",
                twin.field.ident, field.ident, name
            ),
        );
        return None;
    }
    Some(index)
}
