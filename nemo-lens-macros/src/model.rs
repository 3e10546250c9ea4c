//! The declaration as written: what [`parse`](crate::parse) reads from the
//! struct and its attributes, before any rule is checked. Every node keeps
//! its tokens, so errors can be spanned on the whole of it.

use proc_macro2::TokenStream;
use syn::{Ident, LitStr, Path, Type, Visibility};

use crate::kind::{FieldType, InstrumentKind};

/// The annotated struct.
pub struct Container {
    pub ident: Ident,
    pub vis: Visibility,
    /// Path of the crate that exposes `__private` (`::nemo_lens` by default).
    pub krate: Path,
    /// `#[instruments(prefix = "..")]`: names fields without an explicit name.
    pub prefix: Option<LitStr>,
    /// Whether to generate chainable setters.
    pub setters: bool,
    /// `#[instruments(guard)]`: generate `T::start(&meter) -> TGuard`.
    pub guard: Option<Ident>,
    /// `#[instruments(observe)]`: generate `T::observe(&meter, source)`.
    pub observe: Option<Ident>,
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
    /// `#[gauge(..)]`, `#[histogram(..)]`, ...: the field is recorded, into
    /// each instrument declared (usually one; more when the same value feeds
    /// a renamed metric's old and new names, or a counter and a histogram).
    Instruments(Vec<InstrumentDecl>),
    /// `#[attribute(..)]`: the field's value is attached to measurements.
    Attribute(AttributeDecl),
    /// `#[flatten]`: the field is a group deriving `Attributes`, whose
    /// attributes are attached to measurements.
    Flatten(FlattenDecl),
}

/// `#[flatten]` or `#[flatten(only(..))]` on a field.
pub struct FlattenDecl {
    /// The measured fields and instruments the group is attached to; `None`
    /// for all of them.
    pub only: Option<Vec<Only>>,
}

/// `#[histogram("name", unit = "s", ..)]` on a field.
pub struct InstrumentDecl {
    pub kind: InstrumentKind,
    /// The attribute's path (`histogram`), for errors about the whole kind.
    pub kind_path: Path,
    /// The explicit name, if given (otherwise derived from the prefix).
    pub name: Option<LitStr>,
    pub unit: Option<LitStr>,
    pub description: Option<LitStr>,
    pub buckets: Option<Buckets>,
    /// `attr("key" = "value", ..)`.
    pub attrs: Vec<StaticAttr>,
    /// The `unit_in_name` flag: the name spells its unit on purpose.
    pub unit_in_name: Option<Ident>,
    /// The `start_at_zero` flag: `T::start_at_zero(&meter)` creates every
    /// series of this counter at 0.
    pub start_at_zero: Option<Ident>,
    /// The `elapsed` flag: the guard sets this `Duration` histogram from its
    /// start to its end.
    pub elapsed: Option<Ident>,
    /// The `in_flight` flag: the guard adds 1 to this up-down counter at its
    /// start and 1 back at its end.
    pub in_flight: Option<Ident>,
    /// The number type, `None` when the field type is not a supported number.
    pub field_type: Option<FieldType>,
    /// `opt_in = ".."` or `until_opt_in = ".."`.
    pub gate: Option<GateDecl>,
    /// `aggregation = ".."`.
    pub aggregation: Option<LitStr>,
}

/// `opt_in = "value"` (recorded when the meter opts in to `value`) or
/// `until_opt_in = "value"` (recorded until it opts in to `value` alone).
pub struct GateDecl {
    pub kind: GateKind,
    pub value: LitStr,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GateKind {
    OptIn,
    UntilOptIn,
}

impl GateKind {
    pub fn key(self) -> &'static str {
        match self {
            GateKind::OptIn => "opt_in",
            GateKind::UntilOptIn => "until_opt_in",
        }
    }
}

/// `#[attribute("key", default = "..", only(field, "instrument", ..))]` on a field.
pub struct AttributeDecl {
    pub key: LitStr,
    pub default: Option<LitStr>,
    /// `on_drop = ".."` (or an enum variant, `on_drop = Outcome::Abandoned`):
    /// the value when a guard is dropped unfinished.
    pub on_drop: Option<Box<syn::Expr>>,
    /// The `error_type` flag: the attribute a guard's `fail(e)` sets.
    pub error_type: Option<Ident>,
    /// The `required` flag: a record with measurements but without this
    /// attribute warns once, naming it.
    pub required: Option<Ident>,
    /// The measured fields and instruments it is attached to; `None` for
    /// all of them.
    pub only: Option<Vec<Only>>,
}

/// One entry of `only(..)`.
pub enum Only {
    /// A measured field: every instrument it feeds.
    Field(Ident),
    /// An instrument, by name: every field's measurements of it.
    Instrument(LitStr),
}

/// `"key" = "value"` inside `attr(..)`.
pub struct StaticAttr {
    pub key: LitStr,
    pub value: LitStr,
}

/// `buckets = [..]`.
pub struct Buckets {
    /// The whole `buckets = [..]`.
    pub tokens: TokenStream,
    /// Each bound with its literal.
    pub values: Vec<(f64, syn::Expr)>,
}
