//! `#[derive(Attributes)]`: a group of `#[attribute]` fields that
//! `Instruments` structs `#[flatten]`. The fields are read with the
//! `Instruments` parser's attribute rules (keys, defaults) and expanded into
//! the `Attributes` impl that the flattening struct's record path calls.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{Data, DeriveInput, Fields, LitStr, Path};

use crate::ctxt::Ctxt;
use crate::expand::attribute;
use crate::expand::setters::attribute_setter;
use crate::model::AttributeDecl;
use crate::{messages, parse, validate};

/// One field of the group.
struct Member<'a> {
    field: &'a syn::Field,
    ident: &'a syn::Ident,
    inner_ty: &'a syn::Type,
    decl: AttributeDecl,
}

/// The whole derive: the impl and setters, or errors plus a dummy impl.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let krate = krate(&mut cx, input);
    let members = members(&mut cx, input);
    match cx.check() {
        Ok(()) => expand(input, &krate, &members),
        Err(errors) => {
            let mut tokens = errors.to_compile_error();
            tokens.extend(dummy(input, &krate));
            tokens
        }
    }
}

/// `#[attributes(crate = "path")]`, for the crates inside nemo-lens.
fn krate(cx: &mut Ctxt, input: &DeriveInput) -> Path {
    let mut krate: Path = syn::parse_quote!(::nemo_lens);
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("attributes"))
    {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let path: LitStr = meta.value()?.parse()?;
                krate = path.parse()?;
                Ok(())
            } else {
                let key = meta.path.to_token_stream().to_string();
                Err(meta.error(messages::unknown("#[attributes] key", &key, &["crate"])))
            }
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
    krate
}

fn members<'a>(cx: &mut Ctxt, input: &'a DeriveInput) -> Vec<Member<'a>> {
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => &named.named,
            _ => {
                cx.error(
                    &input.ident,
                    "#[derive(Attributes)] needs a struct with named fields, each \
                     #[attribute(\"key\")] and `Option<..>`",
                );
                return Vec::new();
            }
        },
        _ => {
            cx.error(
                &input.ident,
                "#[derive(Attributes)] goes on a struct of #[attribute(\"key\")] fields; for an \
                 enum of attribute values, derive `AttributeValue`",
            );
            return Vec::new();
        }
    };
    if !input.generics.params.is_empty() {
        cx.error(
            &input.generics,
            "#[derive(Attributes)] does not support generic parameters: declare a concrete struct",
        );
    }
    let mut seen: Vec<String> = Vec::new();
    let mut members = Vec::new();
    for field in fields {
        let Some(ident) = field.ident.as_ref() else {
            continue;
        };
        let attrs: Vec<_> = field
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("attribute"))
            .collect();
        let Some(attr) = attrs.first() else {
            cx.error(
                ident,
                format!(
                    "field `{ident}` of an attribute group needs #[attribute(\"key\")]: every \
                     field of the group is attached to the measurements of the sets that \
                     flatten it"
                ),
            );
            continue;
        };
        for extra in &attrs[1..] {
            cx.error(
                extra,
                format!("field `{ident}` is already declared with #[attribute]: keep one"),
            );
        }
        let inner_ty = parse::option_inner(&field.ty);
        if inner_ty.is_none() {
            cx.error(
                &field.ty,
                format!(
                    "field `{ident}` must be an `Option<..>`: an attribute that is `None` is left \
                     off (or takes its default), so write `{ident}: Option<{}>`",
                    messages::display_type(&field.ty)
                ),
            );
        }
        let Some(decl) = parse::attribute(cx, attr) else {
            continue;
        };
        if decl.on_drop.is_some() || decl.error_type.is_some() {
            cx.error(
                attr,
                "on_drop and error_type belong to a set's guard: declare the attribute in the \
                 #[instruments(guard)] struct rather than in a group",
            );
        }
        if decl.only.is_some() {
            cx.error(
                attr,
                "only(..) scopes an attribute to measurements, and a group has none: write \
                 #[flatten(only(..))] where a set flattens the group",
            );
        }
        validate::attribute_key(cx, &decl.key, &mut seen, &[]);
        if let Some(inner_ty) = inner_ty {
            members.push(Member {
                field,
                ident,
                inner_ty,
                decl,
            });
        }
    }
    members
}

fn expand(input: &DeriveInput, krate: &Path, members: &[Member]) -> TokenStream {
    let p = quote!(#krate::__private);
    let ident = &input.ident;
    let keys = members.iter().map(|m| m.decl.key.value());
    let fields: Vec<attribute::Field> = members
        .iter()
        .map(|m| attribute::Field {
            receiver: quote!(self),
            ident: m.ident,
            ty: m.inner_ty,
            key: m.decl.key.value(),
            default: m.decl.default.as_ref(),
        })
        .collect();
    let descriptors = fields.iter().map(|f| f.descriptor(&p));
    let parts = fields.iter().enumerate().map(|(i, f)| {
        let part = f.key_part(&p);
        quote!(parts[#i] = #part;)
    });
    let pushes = fields.iter().map(|f| f.push(&quote!(attributes), &p));
    let setters = members.iter().map(|m| {
        let doc = format!("Sets [`{0}`](Self::{0}).", m.ident);
        attribute_setter(m.ident, &m.field.vis, m.inner_ty, &doc, &p)
    });
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #p::Attributes for #ident {
                const KEYS: &'static [&'static str] = &[#(#keys),*];

                const ATTRIBUTES: &'static [#p::AttributeDescriptor] = &[#(#descriptors),*];

                #[inline]
                fn key_parts<'a>(&'a self, parts: &mut [#p::Option<#p::KeyPart<'a>>]) {
                    #(#parts)*
                }

                fn push_key_values(&self, attributes: &mut #p::Vec<#p::KeyValue>) {
                    #(#pushes)*
                }
            }

            #[automatically_derived]
            impl #ident {
                #(#setters)*
            }
        };
    }
}

/// An impl with no attributes, so that one mistake gives one message rather
/// than one more at every set that flattens the group.
fn dummy(input: &DeriveInput, krate: &Path) -> TokenStream {
    if !input.generics.params.is_empty() || !matches!(input.data, Data::Struct(_)) {
        return TokenStream::new();
    }
    let ident = &input.ident;
    let p = quote!(#krate::__private);
    quote! {
        const _: () = {
            impl #p::Attributes for #ident {
                const KEYS: &'static [&'static str] = &[];
                const ATTRIBUTES: &'static [#p::AttributeDescriptor] = &[];
                fn key_parts<'a>(&'a self, _: &mut [#p::Option<#p::KeyPart<'a>>]) {}
                fn push_key_values(&self, _: &mut #p::Vec<#p::KeyValue>) {}
            }
        };
    }
}
