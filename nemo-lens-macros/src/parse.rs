//! The struct and its attributes into the [`model`](crate::model).
//!
//! This stage checks the form of the declaration: a struct of named
//! `Option<..>` fields, one kind attribute per field, known keys, each key
//! written once, literals where literals are expected. What the values mean
//! (valid names and units, increasing buckets, agreeing duplicates) is checked
//! in [`validate`](crate::validate).

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::parse::{ParseStream, Parser};
use syn::{
    Data, DeriveInput, Expr, ExprLit, ExprUnary, Fields, GenericArgument, Ident, Lit, LitStr, Meta,
    PathArguments, Token, Type, UnOp,
};

use crate::ctxt::Ctxt;
use crate::kind::{FieldType, InstrumentKind};
use crate::messages;
use crate::model::{
    AttributeDecl, Buckets, Container, Field, FlattenDecl, GateDecl, GateKind, InstrumentDecl,
    Only, Role, StaticAttr,
};

const CONTAINER_KEYS: [&str; 5] = ["prefix", "crate", "setters", "guard", "observe"];
const INSTRUMENT_KEYS: [&str; 11] = [
    "unit",
    "description",
    "buckets",
    "attr",
    "unit_in_name",
    "start_at_zero",
    "elapsed",
    "in_flight",
    "opt_in",
    "until_opt_in",
    "aggregation",
];
const ATTRIBUTE_KEYS: [&str; 5] = ["default", "only", "on_drop", "error_type", "required"];

/// Builds the model, or `None` when the input is not a struct with named
/// fields (errors are in `cx` either way).
pub fn container(cx: &mut Ctxt, input: &DeriveInput) -> Option<Container> {
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => &named.named,
            Fields::Unnamed(_) | Fields::Unit => {
                cx.error(
                    &input.ident,
                    "#[derive(Instruments)] needs a struct with named fields: each field name \
                     becomes a setter and a descriptor, e.g. `struct StepMetrics { loss: Option<f64> }`",
                );
                return None;
            }
        },
        Data::Enum(data) => return not_a_struct(cx, data.enum_token, "enums"),
        Data::Union(data) => return not_a_struct(cx, data.union_token, "unions"),
    };
    if !input.generics.params.is_empty() {
        cx.error(
            &input.generics,
            "#[derive(Instruments)] does not support generic parameters: each set is cached \
             per type, so declare a concrete struct",
        );
    }

    let mut container = Container {
        ident: input.ident.clone(),
        vis: input.vis.clone(),
        krate: syn::parse_quote!(::nemo_lens),
        prefix: None,
        setters: true,
        guard: None,
        observe: None,
        fields: Vec::new(),
    };
    container_attrs(cx, &input.attrs, &mut container);
    container.fields = fields.iter().filter_map(|f| field(cx, f)).collect();
    Some(container)
}

fn not_a_struct(cx: &mut Ctxt, token: impl ToTokens, what: &str) -> Option<Container> {
    cx.error(
        token,
        format!(
            "#[derive(Instruments)] works on structs, not {what}: declare a struct of \
             `Option<..>` fields, one per measurement"
        ),
    );
    None
}

/// The keys already written in one place, so that a repeated key is an error
/// on its second occurrence rather than a silent overwrite.
struct Keys {
    place: &'static str,
    seen: Vec<String>,
}

impl Keys {
    fn new(place: &'static str) -> Self {
        Keys {
            place,
            seen: Vec::new(),
        }
    }

    /// Whether `key` is new here; reports it on `node` when it is not.
    fn first(&mut self, cx: &mut Ctxt, key: &str, node: impl ToTokens) -> bool {
        if self.seen.iter().any(|k| k == key) {
            cx.error(
                node,
                format!(
                    "duplicate key `{key}` in {}: it was already set; keep one",
                    self.place
                ),
            );
            return false;
        }
        self.seen.push(key.to_owned());
        true
    }
}

/// Every `#[instruments(..)]` of the struct; a key repeated across two of
/// them is a duplicate like one repeated within one.
fn container_attrs(cx: &mut Ctxt, attrs: &[syn::Attribute], container: &mut Container) {
    let mut keys = Keys::new("#[instruments(..)]");
    for attr in attrs.iter().filter(|a| a.path().is_ident("instruments")) {
        let result = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            let path = &meta.path;
            match key.as_str() {
                "prefix" => {
                    let prefix: LitStr = meta.value()?.parse()?;
                    if keys.first(cx, &key, quote!(#path = #prefix)) {
                        container.prefix = Some(prefix);
                    }
                }
                "crate" => {
                    let krate: LitStr = meta.value()?.parse()?;
                    if keys.first(cx, &key, quote!(#path = #krate)) {
                        container.krate = krate.parse()?;
                    }
                }
                "guard" => {
                    if keys.first(cx, &key, path) {
                        container.guard = path.get_ident().cloned();
                    }
                }
                "observe" => {
                    if keys.first(cx, &key, path) {
                        container.observe = path.get_ident().cloned();
                    }
                }
                "setters" => {
                    let setters: syn::LitBool = meta.value()?.parse()?;
                    if keys.first(cx, &key, quote!(#path = #setters)) {
                        container.setters = setters.value;
                    }
                }
                _ => {
                    return Err(meta.error(messages::unknown(
                        "#[instruments] key",
                        &key,
                        &CONTAINER_KEYS,
                    )))
                }
            }
            Ok(())
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
}

fn field(cx: &mut Ctxt, field: &syn::Field) -> Option<Field> {
    let ident = field.ident.clone()?;
    let mut role: Option<Role> = None;
    // Set when a kind attribute failed to parse: it was reported already, so
    // the field must not also be reported as having no kind.
    let mut broken = false;
    for attr in &field.attrs {
        let Some(name) = attr.path().get_ident().map(ToString::to_string) else {
            continue;
        };
        if let Some(kind) = InstrumentKind::from_attr_name(&name) {
            let parsed = instrument(cx, attr, kind);
            match (&mut role, parsed) {
                // A field may feed several instruments; not an attribute too.
                (Some(Role::Instruments(decls)), Some(decl)) => decls.push(decl),
                (Some(existing @ (Role::Attribute(_) | Role::Flatten(_))), _) => {
                    let existing = role_name(existing);
                    already_declared(cx, attr, &ident, existing)
                }
                (None, Some(decl)) => role = Some(Role::Instruments(vec![decl])),
                (_, None) => broken = true,
            }
        } else if name == "attribute" {
            let parsed = attribute(cx, attr);
            match (&role, parsed) {
                (Some(Role::Attribute(_)), _) => cx.error(
                    attr,
                    format!(
                        "field `{ident}` is already declared with #[attribute]: a field holds one \
                         attribute; split it into two fields"
                    ),
                ),
                (Some(existing), _) => already_declared(cx, attr, &ident, role_name(existing)),
                (None, Some(decl)) => role = Some(Role::Attribute(decl)),
                (None, None) => broken = true,
            }
        } else if name == "flatten" {
            let parsed = flatten(cx, attr);
            match (&role, parsed) {
                (Some(existing), _) => already_declared(cx, attr, &ident, role_name(existing)),
                (None, Some(decl)) => role = Some(Role::Flatten(decl)),
                (None, None) => broken = true,
            }
        }
    }

    // A flattened group is a struct, set whole; the rest are optional.
    let inner_ty = match role {
        Some(Role::Flatten(_)) => Some(&field.ty),
        _ => option_inner(&field.ty),
    };
    if inner_ty.is_none() {
        cx.error(
            &field.ty,
            format!(
                "field `{ident}` must be an `Option<..>`: only fields that are `Some` are recorded, \
                 so write `{ident}: Option<{}>`",
                messages::display_type(&field.ty)
            ),
        );
    }
    let Some(mut role) = role else {
        if !broken {
            cx.error(
                &ident,
                format!(
                    "field `{ident}` has no instrument kind: add #[gauge(..)], #[histogram(..)], \
                     #[counter(..)] or #[up_down_counter(..)], or #[attribute(\"key\")] to attach \
                     it to every measurement"
                ),
            );
        }
        return None;
    };
    let inner_ty = inner_ty?.clone();
    if let Role::Instruments(decls) = &mut role {
        for decl in decls {
            decl.field_type = field_type(&inner_ty);
        }
    }
    Some(Field {
        ident,
        vis: field.vis.clone(),
        inner_ty,
        doc: doc_comment(&field.attrs),
        role,
    })
}

fn already_declared(cx: &mut Ctxt, attr: &syn::Attribute, ident: &Ident, existing: &str) {
    cx.error(
        attr,
        format!(
            "field `{ident}` is already declared with #[{existing}]: a field is either measured \
             or attached as an attribute, not both; split it into two fields",
        ),
    );
}

fn role_name(role: &Role) -> &'static str {
    match role {
        Role::Instruments(decls) => decls.first().map_or("gauge", |d| d.kind.attr_name()),
        Role::Attribute(_) => "attribute",
        Role::Flatten(_) => "flatten",
    }
}

/// `#[flatten]`, or `#[flatten(only(field, "instrument", ..))]`.
fn flatten(cx: &mut Ctxt, attr: &syn::Attribute) -> Option<FlattenDecl> {
    let mut decl = FlattenDecl { only: None };
    if matches!(attr.meta, Meta::Path(_)) {
        return Some(decl);
    }
    let result = attr.parse_nested_meta(|meta| {
        if !meta.path.is_ident("only") {
            let key = meta.path.to_token_stream().to_string();
            return Err(meta.error(messages::unknown("#[flatten] key", &key, &["only"])));
        }
        let content;
        syn::parenthesized!(content in meta.input);
        let targets = content.parse_terminated(<Only as syn::parse::Parse>::parse, Token![,])?;
        if targets.is_empty() {
            return Err(meta.error(
                "only(..) lists the measurement fields (or \"instrument\" names) the group is \
                 attached to, and lists none; name at least one, or write #[flatten] to attach it \
                 to all",
            ));
        }
        decl.only = Some(targets.into_iter().collect());
        Ok(())
    });
    match result {
        Ok(()) => Some(decl),
        Err(error) => {
            cx.syn_error(error);
            None
        }
    }
}

fn instrument(
    cx: &mut Ctxt,
    attr: &syn::Attribute,
    kind: InstrumentKind,
) -> Option<InstrumentDecl> {
    let mut decl = InstrumentDecl {
        kind,
        kind_path: attr.path().clone(),
        name: None,
        unit: None,
        description: None,
        buckets: None,
        attrs: Vec::new(),
        field_type: None,
        unit_in_name: None,
        start_at_zero: None,
        elapsed: None,
        in_flight: None,
        gate: None,
        aggregation: None,
    };
    let list = match &attr.meta {
        Meta::Path(_) => return Some(decl),
        Meta::List(list) => list,
        Meta::NameValue(nv) => {
            cx.error(
                nv,
                format!(
                    "write #[{0}(\"name\", ..)], not #[{0} = ..]",
                    kind.attr_name()
                ),
            );
            return None;
        }
    };
    let parser = |input: ParseStream| instrument_args(cx, input, &mut decl);
    match parser.parse2(list.tokens.clone()) {
        Ok(()) => Some(decl),
        Err(error) => {
            cx.syn_error(error);
            None
        }
    }
}

fn instrument_args(
    cx: &mut Ctxt,
    input: ParseStream,
    decl: &mut InstrumentDecl,
) -> syn::Result<()> {
    if input.peek(LitStr) {
        decl.name = Some(input.parse()?);
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    let mut keys = Keys::new(match decl.kind {
        InstrumentKind::Counter => "#[counter(..)]",
        InstrumentKind::UpDownCounter => "#[up_down_counter(..)]",
        InstrumentKind::Gauge => "#[gauge(..)]",
        InstrumentKind::Histogram => "#[histogram(..)]",
    });
    while !input.is_empty() {
        let key: Ident = input.parse()?;
        if key == "attr" {
            let group: proc_macro2::Group = input.parse()?;
            let pairs = static_attrs.parse2(group.stream())?;
            if keys.first(cx, "attr", quote!(#key #group)) {
                decl.attrs = pairs;
            }
        } else if ["unit_in_name", "start_at_zero", "elapsed", "in_flight"]
            .iter()
            .any(|flag| key == flag)
        {
            // Flags, not `= true`: there is no reason to write `= false`.
            if input.peek(Token![=]) {
                let eq: Token![=] = input.parse()?;
                let value: Expr = input.parse()?;
                let example = match key.to_string().as_str() {
                    "unit_in_name" => {
                        "#[histogram(\"app.latency_ms\", unit = \"ms\", unit_in_name)]"
                    }
                    "elapsed" => "#[histogram(\"app.job.duration\", unit = \"s\", elapsed)]",
                    "in_flight" => {
                        "#[up_down_counter(\"app.jobs.active\", unit = \"{job}\", in_flight)]"
                    }
                    _ => {
                        "#[counter(\"app.rollout.finished\", unit = \"{rollout}\", start_at_zero)]"
                    }
                };
                cx.error(
                    quote!(#key #eq #value),
                    format!("`{key}` is a flag: write it alone, e.g. {example}"),
                );
            }
            // Taken as set either way, so nothing else is reported as well.
            let name = key.to_string();
            if keys.first(cx, &name, &key) {
                let slot = match name.as_str() {
                    "unit_in_name" => &mut decl.unit_in_name,
                    "elapsed" => &mut decl.elapsed,
                    "in_flight" => &mut decl.in_flight,
                    _ => &mut decl.start_at_zero,
                };
                *slot = Some(key);
            }
        } else {
            let eq: Token![=] = input.parse()?;
            let value: Expr = input.parse()?;
            let node = quote!(#key #eq #value);
            let name = key.to_string();
            let gate = match name.as_str() {
                "opt_in" => Some(GateKind::OptIn),
                "until_opt_in" => Some(GateKind::UntilOptIn),
                _ => None,
            };
            if let Some(kind) = gate {
                match &decl.gate {
                    Some(first) => cx.error(
                        &node,
                        format!(
                            "this instrument is already gated with `{}`: an instrument follows \
                             one opt-in rule, so keep one of `opt_in` and `until_opt_in`",
                            first.kind.key()
                        ),
                    ),
                    None => {
                        decl.gate =
                            string_literal(cx, &value, &name).map(|value| GateDecl { kind, value })
                    }
                }
                continue_after_comma(input)?;
                continue;
            }
            let slot = match name.as_str() {
                "unit" => Some(&mut decl.unit),
                "description" => Some(&mut decl.description),
                "aggregation" => Some(&mut decl.aggregation),
                "buckets" => None,
                "on_drop" | "error_type" => {
                    cx.error(
                        &key,
                        format!(
                            "`{name}` goes on an #[attribute(..)]: it sets an attribute's value \
                             when a guard ends, and a measurement is not an attribute"
                        ),
                    );
                    continue_after_comma(input)?;
                    continue;
                }
                other => {
                    cx.error(&key, messages::unknown("key", other, &INSTRUMENT_KEYS));
                    continue_after_comma(input)?;
                    continue;
                }
            };
            if keys.first(cx, &name, &node) {
                match slot {
                    Some(slot) => *slot = string_literal(cx, &value, &name),
                    None => decl.buckets = buckets(cx, node, &value),
                }
            }
        }
        continue_after_comma(input)?;
    }
    Ok(())
}

fn continue_after_comma(input: ParseStream) -> syn::Result<()> {
    if !input.is_empty() {
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

/// The pairs of `attr("key" = "value", ..)`.
fn static_attrs(input: ParseStream) -> syn::Result<Vec<StaticAttr>> {
    let pairs = input.parse_terminated(
        |pair: ParseStream| {
            let key: LitStr = pair.parse()?;
            pair.parse::<Token![=]>()?;
            let value: LitStr = pair.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "static attribute values are string literals: attr(\"key\" = \"value\")",
                )
            })?;
            Ok(StaticAttr { key, value })
        },
        Token![,],
    )?;
    Ok(pairs.into_iter().collect())
}

pub(crate) fn attribute(cx: &mut Ctxt, attr: &syn::Attribute) -> Option<AttributeDecl> {
    let parser = |input: ParseStream| -> syn::Result<AttributeDecl> {
        let key: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "write the attribute key first: #[attribute(\"gen_ai.request.model\")]",
            )
        })?;
        let mut decl = AttributeDecl {
            key,
            default: None,
            on_drop: None,
            error_type: None,
            required: None,
            only: None,
        };
        let mut keys = Keys::new("#[attribute(..)]");
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let name: Ident = input.parse()?;
            if name == "only" {
                let group: proc_macro2::Group = input.parse()?;
                let targets = Parser::parse2(
                    syn::punctuated::Punctuated::<Only, Token![,]>::parse_terminated,
                    group.stream(),
                )?;
                let node = quote!(#name #group);
                if targets.is_empty() {
                    cx.error(
                        &node,
                        "only(..) lists the measurement fields (or \"instrument\" names) the \
                         attribute is attached to, and lists none; name at least one, or remove \
                         only(..) to attach it to all",
                    );
                } else if keys.first(cx, "only", &node) {
                    decl.only = Some(targets.into_iter().collect());
                }
                continue;
            }
            if name == "error_type" && !input.peek(Token![=]) {
                if keys.first(cx, "error_type", &name) {
                    decl.error_type = Some(name);
                }
                continue;
            }
            if name == "required" && !input.peek(Token![=]) {
                if keys.first(cx, "required", &name) {
                    decl.required = Some(name);
                }
                continue;
            }
            let eq: Token![=] = input.parse()?;
            let value: Expr = input.parse()?;
            let node = quote!(#name #eq #value);
            match name.to_string().as_str() {
                "default" if keys.first(cx, "default", &node) => {
                    decl.default = string_literal(cx, &value, "default");
                }
                "on_drop" if keys.first(cx, "on_drop", &node) => {
                    decl.on_drop = on_drop_value(cx, value);
                }
                "default" | "on_drop" => {}
                other => cx.error(&name, messages::unknown("key", other, &ATTRIBUTE_KEYS)),
            }
        }
        Ok(decl)
    };
    match attr.parse_args_with(parser) {
        Ok(decl) => Some(decl),
        Err(error) => {
            cx.syn_error(error);
            None
        }
    }
}

/// A string (converted into the field's type) or a path of the field's own
/// type, such as an enum variant, which has no conversion from text.
fn on_drop_value(cx: &mut Ctxt, value: Expr) -> Option<Box<Expr>> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(_), ..
        })
        | Expr::Path(_) => Some(Box::new(value)),
        other => {
            cx.error(
                &other,
                "`on_drop` takes a string literal or an enum variant, e.g. on_drop = \"cancelled\" \
                 or on_drop = Outcome::Abandoned",
            );
            None
        }
    }
}

fn string_literal(cx: &mut Ctxt, value: &Expr, key: &str) -> Option<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Some(lit.clone()),
        other => {
            cx.error(
                other,
                format!("`{key}` takes a string literal, e.g. {key} = \"..\""),
            );
            None
        }
    }
}

fn buckets(cx: &mut Ctxt, tokens: TokenStream, value: &Expr) -> Option<Buckets> {
    let Expr::Array(array) = value else {
        cx.error(
            value,
            "`buckets` takes an array of number literals, e.g. buckets = [0.1, 0.5, 1.0]",
        );
        return None;
    };
    let mut values = Vec::new();
    for element in &array.elems {
        match number_literal(element) {
            Some(number) => values.push((number, element.clone())),
            None => cx.error(
                element,
                "bucket bounds must be number literals, so that they are checked at compile time",
            ),
        }
    }
    Some(Buckets { tokens, values })
}

fn number_literal(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Float(lit),
            ..
        }) => lit.base10_parse().ok(),
        Expr::Lit(ExprLit {
            lit: Lit::Int(lit), ..
        }) => lit.base10_parse().ok(),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => number_literal(expr).map(|n| -n),
        Expr::Paren(paren) => number_literal(&paren.expr),
        _ => None,
    }
}

/// `T` of `Option<T>`, also when written `std::option::Option<T>` or
/// `::core::option::Option<T>`.
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    generic_inner(
        ty,
        "Option",
        &[&[], &["std", "option"], &["core", "option"]],
    )
}

/// `T` of `name<T>` when the path is `name` or one of `modules::name`.
fn generic_inner<'a>(ty: &'a Type, name: &str, modules: &[&[&str]]) -> Option<&'a Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let segments: Vec<_> = path.path.segments.iter().collect();
    let (last, module) = segments.split_last()?;
    let module: Vec<String> = module.iter().map(|s| s.ident.to_string()).collect();
    let known_path = modules
        .iter()
        .any(|known| known.len() == module.len() && known.iter().zip(&module).all(|(k, m)| k == m));
    if last.ident != name || !known_path {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [GenericArgument::Type(inner)] => Some(inner),
        _ => None,
    }
}

/// A number type, or `Vec` of one.
fn field_type(ty: &Type) -> Option<FieldType> {
    let vec_of = generic_inner(ty, "Vec", &[&[], &["std", "vec"], &["alloc", "vec"]]);
    let (number, repeated) = match vec_of {
        Some(inner) => (inner, true),
        None => (ty, false),
    };
    let Type::Path(path) = number else {
        return None;
    };
    let ident = path.path.segments.last()?.ident.to_string();
    FieldType::from_rust(&ident, repeated)
}

fn doc_comment(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|s| s.lines().map(|l| l.trim().to_owned()).collect::<Vec<_>>())
        .filter(|l| !l.is_empty())
        .collect();
    (!lines.is_empty()).then(|| lines.join(" "))
}

impl syn::parse::Parse for Only {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(LitStr) {
            return input.parse().map(Only::Instrument);
        }
        input.parse().map(Only::Field).map_err(|e| {
            syn::Error::new(
                e.span(),
                "only(..) takes measurement field names and \"instrument.name\" literals, \
                 e.g. only(duration_s, \"app.tokens\")",
            )
        })
    }
}
