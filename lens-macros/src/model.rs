//! The typed model of a `#[derive(Instruments)]` input, built by [`parse`]
//! and checked by [`validate`].
//!
//! [`parse`]: crate::parse
//! [`validate`]: crate::validate

use proc_macro2::Span;
use syn::{Ident, LitStr, Path, Type, Visibility};

/// The annotated struct.
pub struct Container {
    pub ident: Ident,
    pub vis: Visibility,
    /// Path of the crate that exposes `__private` (`::nemo_lens` by default).
    pub krate: Path,
    pub prefix: Option<LitStr>,
    /// Whether to generate chainable setters.
    pub setters: bool,
    pub fields: Vec<Field>,
}

/// One named field.
pub struct Field {
    pub ident: Ident,
    pub vis: Visibility,
    /// `T` of the field's `Option<T>`.
    pub inner_ty: Type,
    /// The doc comment, lines joined by single spaces.
    pub doc: Option<String>,
    pub role: Role,
}

/// What a field contributes.
pub enum Role {
    Measure(Measure),
    Attribute(Attribute),
}

/// A field recorded into an instrument.
pub struct Measure {
    pub kind: Kind,
    pub kind_span: Span,
    /// The explicit name, if given (otherwise derived from the prefix).
    pub name: Option<LitStr>,
    pub unit: Option<LitStr>,
    pub description: Option<LitStr>,
    pub buckets: Option<Buckets>,
    pub attrs: Vec<StaticAttr>,
    /// The number type, `None` when the field type is not a supported number.
    pub value: Option<ValueType>,
}

/// A field whose value is attached to every measurement of the struct.
pub struct Attribute {
    pub key: LitStr,
    pub default: Option<LitStr>,
}

/// `attr("key" = "value")` on a measured field.
pub struct StaticAttr {
    pub key: LitStr,
    pub value: LitStr,
}

/// `buckets = [..]`.
pub struct Buckets {
    pub span: Span,
    pub values: Vec<(f64, Span)>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Counter,
    UpDownCounter,
    Gauge,
    Histogram,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::Gauge,
        Kind::Histogram,
        Kind::Counter,
        Kind::UpDownCounter,
    ];

    pub fn attr_name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::UpDownCounter => "up_down_counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }

    pub fn from_attr_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.attr_name() == name)
    }
}

/// A supported field number type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ValueType {
    pub repr: Repr,
    /// The Rust type as written, e.g. `f32`.
    pub rust: &'static str,
}

/// The SDK number type a field is widened to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Repr {
    F64,
    U64,
    I64,
}

impl ValueType {
    pub const SUPPORTED: [&'static str; 11] = [
        "f64", "f32", "u64", "u32", "u16", "u8", "usize", "i64", "i32", "i16", "i8",
    ];

    pub fn from_rust(name: &str) -> Option<ValueType> {
        let rust = *Self::SUPPORTED.iter().find(|s| **s == name)?;
        let repr = match rust.as_bytes()[0] {
            b'f' => Repr::F64,
            b'u' => Repr::U64,
            _ => Repr::I64,
        };
        Some(ValueType { repr, rust })
    }
}

/// A type as a person would write it, for messages.
pub fn display_type(ty: &Type) -> String {
    quote::ToTokens::to_token_stream(ty)
        .to_string()
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
}
