//! The enum and its `#[attribute_value(..)]` attributes into an [`Enum`],
//! every variant resolved to its wire value and checked: unit variants only,
//! known keys each written once, a known `rename_all`, no empty and no
//! shared wire value.

use quote::{quote, ToTokens};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Data, DeriveInput, Fields, LitStr, Path};

use super::case::RenameRule;
use super::{Enum, Variant};
use crate::ctxt::Ctxt;
use crate::messages;

const ENUM_KEYS: [&str; 2] = ["rename_all", "crate"];
const VARIANT_KEYS: [&str; 1] = ["rename"];

/// Reads `input`. The result is complete only when `cx` holds no error;
/// otherwise it still carries the crate path, for the dummy impl.
pub fn enumeration(cx: &mut Ctxt, input: &DeriveInput) -> Enum {
    let mut parsed = Enum {
        ident: input.ident.clone(),
        krate: syn::parse_quote!(::nemo_lens),
        variants: Vec::new(),
    };
    let rename_all = enum_attrs(cx, &input.attrs, &mut parsed.krate);
    let data = match &input.data {
        Data::Enum(data) => data,
        Data::Struct(data) => {
            not_an_enum(cx, data.struct_token, "structs");
            return parsed;
        }
        Data::Union(data) => {
            not_an_enum(cx, data.union_token, "unions");
            return parsed;
        }
    };
    if !input.generics.params.is_empty() {
        cx.error(
            &input.generics,
            "#[derive(AttributeValue)] does not support generic parameters: a field-less enum \
             has no use for them; remove them",
        );
    }

    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            let ident = &variant.ident;
            cx.error(
                &variant.fields,
                format!(
                    "variant `{ident}` holds data, but an attribute value is one of a fixed set \
                     of strings: make it a unit variant (`{ident}`), and put the data in a field \
                     of its own"
                ),
            );
        }
        let rename = variant_attrs(cx, &variant.attrs);
        // The error on a shared value points at what gave it: the rename, or
        // the variant name that `rename_all` spelled.
        let (wire, source) = match rename {
            Some(rename) => (rename.value(), rename.to_token_stream()),
            None => {
                let name = variant.ident.unraw().to_string();
                let wire = match rename_all {
                    Some(rule) => rule.apply(&name),
                    None => name,
                };
                (wire, variant.ident.to_token_stream())
            }
        };
        if let Some(first) = parsed.variants.iter().find(|v| v.wire == wire) {
            cx.error(
                source,
                format!(
                    "variants `{}` and `{}` both export \"{wire}\": an attribute value names one \
                     variant; give one of them another value with \
                     #[attribute_value(rename = \"..\")]",
                    first.ident, variant.ident
                ),
            );
        }
        parsed.variants.push(Variant {
            ident: variant.ident.clone(),
            wire,
        });
    }
    parsed
}

fn not_an_enum(cx: &mut Ctxt, token: impl ToTokens, what: &str) {
    cx.error(
        token,
        format!(
            "#[derive(AttributeValue)] works on field-less enums, not {what}: declare an enum of \
             the values the attribute may take, e.g. `enum Outcome {{ Success, Failure }}`"
        ),
    );
}

/// The keys already written on one item, so that a repeated key is an
/// error on its second occurrence rather than a silent overwrite.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    fn first(&mut self, cx: &mut Ctxt, key: &str, node: impl ToTokens) -> bool {
        if self.0.iter().any(|k| k == key) {
            cx.error(
                node,
                format!(
                    "duplicate key `{key}` in #[attribute_value(..)]: it was already set; keep one"
                ),
            );
            return false;
        }
        self.0.push(key.to_owned());
        true
    }
}

/// Every `#[attribute_value(..)]` on the enum: `crate` into `krate`, and
/// the `rename_all` rule.
fn enum_attrs(cx: &mut Ctxt, attrs: &[Attribute], krate: &mut Path) -> Option<RenameRule> {
    let mut seen = Seen::default();
    let mut rename_all = None;
    for_each_key(cx, attrs, |cx, key, meta| {
        let path = &meta.path;
        match key {
            "rename_all" => {
                let value: LitStr = meta.value()?.parse()?;
                if !seen.first(cx, key, quote!(#path = #value)) {
                    return Ok(());
                }
                match RenameRule::from_name(&value.value()) {
                    Some(rule) => rename_all = Some(rule),
                    None => cx.error(
                        &value,
                        messages::unknown("`rename_all` value", &value.value(), &RenameRule::NAMES),
                    ),
                }
            }
            "crate" => {
                let value: LitStr = meta.value()?.parse()?;
                if seen.first(cx, key, quote!(#path = #value)) {
                    *krate = value.parse()?;
                }
            }
            "rename" => {
                cx.error(
                    path,
                    "`rename` goes on a variant: on the enum, `rename_all = \"..\"` renames \
                     every variant",
                );
                skip_value(meta)?;
            }
            _ => unknown_key(cx, meta, key, &ENUM_KEYS)?,
        }
        Ok(())
    });
    rename_all
}

/// The `rename` of a variant, when it has one.
fn variant_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<LitStr> {
    let mut seen = Seen::default();
    let mut rename = None;
    for_each_key(cx, attrs, |cx, key, meta| {
        let path = &meta.path;
        match key {
            "rename" => {
                let value: LitStr = meta.value()?.parse()?;
                if !seen.first(cx, key, quote!(#path = #value)) {
                    return Ok(());
                }
                if value.value().is_empty() {
                    cx.error(
                        &value,
                        "empty `rename`: an empty attribute value counts as absent, so this \
                         variant would never be exported; give it a value",
                    );
                } else {
                    rename = Some(value);
                }
            }
            "rename_all" | "crate" => {
                cx.error(path, format!("`{key}` goes on the enum, not on a variant"));
                skip_value(meta)?;
            }
            _ => unknown_key(cx, meta, key, &VARIANT_KEYS)?,
        }
        Ok(())
    });
    rename
}

/// Calls `each` with every key of every `#[attribute_value(..)]` in
/// `attrs`. An error it returns ends that attribute, as its remaining
/// tokens can no longer be read.
fn for_each_key(
    cx: &mut Ctxt,
    attrs: &[Attribute],
    mut each: impl FnMut(&mut Ctxt, &str, &ParseNestedMeta) -> syn::Result<()>,
) {
    for attr in attrs
        .iter()
        .filter(|a| a.path().is_ident("attribute_value"))
    {
        let result = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            each(cx, &key, &meta)
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
}

/// Reports `key` and skips its value, so that the keys after it are still
/// read.
fn unknown_key(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    key: &str,
    expected: &[&str],
) -> syn::Result<()> {
    cx.error(
        &meta.path,
        messages::unknown("#[attribute_value] key", key, expected),
    );
    skip_value(meta)
}

/// Consumes the `= value` or `(..)` after a key already reported.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}
