//! Attributes into the typed [`model`](crate::model). Only syntax is checked
//! here; the rules live in [`validate`](crate::validate).

use proc_macro2::Span;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{
    Attribute as SynAttribute, Data, DeriveInput, Expr, ExprLit, ExprUnary, Fields,
    GenericArgument, Lit, LitStr, Meta, PathArguments, Token, Type, UnOp,
};

use crate::ctxt::Ctxt;
use crate::model::{
    Attribute, Buckets, Container, Field, Kind, Measure, Role, StaticAttr, ValueType,
};
use crate::suggest;

const CONTAINER_KEYS: [&str; 3] = ["prefix", "crate", "setters"];
const MEASURE_KEYS: [&str; 4] = ["unit", "description", "buckets", "attr"];
const ATTRIBUTE_KEYS: [&str; 1] = ["default"];

/// Builds the model, or `None` when the input is not a struct with named
/// fields (errors are in `cx` either way).
pub fn container(cx: &mut Ctxt, input: &DeriveInput) -> Option<Container> {
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => &named.named,
            Fields::Unnamed(_) | Fields::Unit => {
                cx.error(
                    input.ident.span(),
                    "#[derive(Instruments)] needs a struct with named fields: each field name \
                     becomes a setter and a descriptor, e.g. `struct StepMetrics { loss: Option<f64> }`",
                );
                return None;
            }
        },
        Data::Enum(data) => return not_a_struct(cx, data.enum_token.span, "enums"),
        Data::Union(data) => return not_a_struct(cx, data.union_token.span, "unions"),
    };
    if let Some(param) = input.generics.params.first() {
        cx.error(
            param.span(),
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
        fields: Vec::new(),
    };
    container_attrs(cx, &input.attrs, &mut container);
    container.fields = fields.iter().filter_map(|f| field(cx, f)).collect();
    Some(container)
}

fn not_a_struct(cx: &mut Ctxt, span: Span, what: &str) -> Option<Container> {
    cx.error(
        span,
        format!(
            "#[derive(Instruments)] works on structs, not {what}: declare a struct of \
             `Option<..>` fields, one per measurement"
        ),
    );
    None
}

fn container_attrs(cx: &mut Ctxt, attrs: &[SynAttribute], container: &mut Container) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("instruments")) {
        let result = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            match key.as_str() {
                "prefix" => container.prefix = Some(meta.value()?.parse()?),
                "crate" => {
                    let path: LitStr = meta.value()?.parse()?;
                    container.krate = path.parse()?;
                }
                "setters" => {
                    let value: syn::LitBool = meta.value()?.parse()?;
                    container.setters = value.value;
                }
                _ => {
                    return Err(meta.error(suggest::unknown(
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
    let mut role: Option<(Role, Span)> = None;
    // Set when a kind attribute failed to parse: it was reported already, so
    // the field must not also be reported as having no kind.
    let mut broken = false;
    for attr in &field.attrs {
        let Some(name) = attr.path().get_ident().map(ToString::to_string) else {
            continue;
        };
        let parsed = if let Some(kind) = Kind::from_attr_name(&name) {
            measure(cx, attr, kind).map(Role::Measure)
        } else if name == "attribute" {
            attribute(cx, attr).map(Role::Attribute)
        } else {
            continue;
        };
        let span = attr.path().span();
        match (&role, parsed) {
            (Some((existing, _)), _) => cx.error(
                span,
                format!(
                    "field `{ident}` is already declared with #[{}]: a field feeds exactly one \
                     instrument or attribute; split it into two fields",
                    role_name(existing),
                ),
            ),
            (None, Some(parsed)) => role = Some((parsed, span)),
            (None, None) => broken = true,
        }
    }

    let inner_ty = option_inner(&field.ty);
    if inner_ty.is_none() {
        cx.error(
            field.ty.span(),
            format!(
                "field `{ident}` must be an `Option<..>`: only fields that are `Some` are recorded, \
                 so write `{ident}: Option<{}>`",
                crate::model::display_type(&field.ty)
            ),
        );
    }
    let Some((mut role, _)) = role else {
        if broken {
            return None;
        }
        cx.error(
            ident.span(),
            format!(
                "field `{ident}` has no instrument kind: add #[gauge(..)], #[histogram(..)], \
                 #[counter(..)] or #[up_down_counter(..)], or #[attribute(\"key\")] to attach it to \
                 every measurement"
            ),
        );
        return None;
    };
    let inner_ty = inner_ty?.clone();
    if let Role::Measure(measure) = &mut role {
        measure.value = value_type(&inner_ty);
    }
    Some(Field {
        ident,
        vis: field.vis.clone(),
        inner_ty,
        doc: doc_comment(&field.attrs),
        role,
    })
}

fn role_name(role: &Role) -> &'static str {
    match role {
        Role::Measure(m) => m.kind.attr_name(),
        Role::Attribute(_) => "attribute",
    }
}

fn measure(cx: &mut Ctxt, attr: &SynAttribute, kind: Kind) -> Option<Measure> {
    let mut measure = Measure {
        kind,
        kind_span: attr.path().span(),
        name: None,
        unit: None,
        description: None,
        buckets: None,
        attrs: Vec::new(),
        value: None,
    };
    let list = match &attr.meta {
        Meta::Path(_) => return Some(measure),
        Meta::List(list) => list,
        Meta::NameValue(nv) => {
            cx.error(
                nv.eq_token.span,
                format!(
                    "write #[{0}(\"name\", ..)], not #[{0} = ..]",
                    kind.attr_name()
                ),
            );
            return None;
        }
    };
    let parser = |input: ParseStream| measure_args(cx, input, &mut measure);
    match parser.parse2(list.tokens.clone()) {
        Ok(()) => Some(measure),
        Err(error) => {
            cx.syn_error(error);
            None
        }
    }
}

fn measure_args(cx: &mut Ctxt, input: ParseStream, measure: &mut Measure) -> syn::Result<()> {
    if input.peek(LitStr) {
        measure.name = Some(input.parse()?);
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    while !input.is_empty() {
        let key: syn::Ident = input.parse()?;
        if key == "attr" {
            let content;
            syn::parenthesized!(content in input);
            let pairs = content.parse_terminated(
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
            measure.attrs.extend(pairs);
        } else {
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            match key.to_string().as_str() {
                "unit" => measure.unit = string_literal(cx, &value, "unit"),
                "description" => measure.description = string_literal(cx, &value, "description"),
                "buckets" => measure.buckets = buckets(cx, &key, &value),
                other => cx.error(key.span(), suggest::unknown("key", other, &MEASURE_KEYS)),
            }
        }
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(())
}

fn attribute(cx: &mut Ctxt, attr: &SynAttribute) -> Option<Attribute> {
    let parser = |input: ParseStream| -> syn::Result<Attribute> {
        let key: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "write the attribute key first: #[attribute(\"gen_ai.request.model\")]",
            )
        })?;
        let mut default = None;
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let name: syn::Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            if name == "default" {
                default = string_literal(cx, &value, "default");
            } else {
                cx.error(
                    name.span(),
                    suggest::unknown("key", &name.to_string(), &ATTRIBUTE_KEYS),
                );
            }
        }
        Ok(Attribute { key, default })
    };
    match attr.parse_args_with(parser) {
        Ok(attribute) => Some(attribute),
        Err(error) => {
            cx.syn_error(error);
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
                other.span(),
                format!("`{key}` takes a string literal, e.g. {key} = \"..\""),
            );
            None
        }
    }
}

fn buckets(cx: &mut Ctxt, key: &syn::Ident, value: &Expr) -> Option<Buckets> {
    let Expr::Array(array) = value else {
        cx.error(
            value.span(),
            "`buckets` takes an array of number literals, e.g. buckets = [0.1, 0.5, 1.0]",
        );
        return None;
    };
    let mut values = Vec::new();
    for element in &array.elems {
        match number_literal(element) {
            Some(number) => values.push((number, element.span())),
            None => cx.error(
                element.span(),
                "bucket bounds must be number literals, so that they are checked at compile time",
            ),
        }
    }
    Some(Buckets {
        span: key
            .span()
            .join(array.span())
            .unwrap_or_else(|| array.span()),
        values,
    })
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
fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let segments: Vec<_> = path.path.segments.iter().collect();
    let (last, module) = segments.split_last()?;
    let module: Vec<String> = module.iter().map(|s| s.ident.to_string()).collect();
    let known_path = matches!(
        module
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        [] | ["std", "option"] | ["core", "option"]
    );
    if last.ident != "Option" || !known_path {
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

fn value_type(ty: &Type) -> Option<ValueType> {
    let Type::Path(path) = ty else { return None };
    let ident = path.path.segments.last()?.ident.to_string();
    ValueType::from_rust(&ident)
}

fn doc_comment(attrs: &[SynAttribute]) -> Option<String> {
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
