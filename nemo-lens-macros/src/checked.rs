//! The declaration after [`validate`](crate::validate): distinct instruments
//! with every property resolved (names from the prefix, descriptions from doc
//! comments, what a sharing field takes from the first), each measured field
//! pointing at its instrument and at the attributes it carries. This is all
//! [`expand`](crate::expand) reads.

use syn::Ident;

use crate::kind::{Aggregation, FieldType, InstrumentKind, ValueType};
use crate::model::GateKind;
use crate::model::{AttributeDecl, Container, Field, FlattenDecl, InstrumentDecl};

/// A declaration that passed every rule, ready to expand.
pub struct Checked<'a> {
    pub container: &'a Container,
    /// Distinct instruments, in order of first declaration.
    pub instruments: Vec<Instrument<'a>>,
    /// Measured fields, in declaration order; a field that feeds several
    /// instruments appears once for each.
    pub measures: Vec<Measured<'a>>,
    /// `#[attribute]` fields, in declaration order.
    pub attributes: Vec<Attached<'a>>,
    /// `#[flatten]` fields (attribute groups), in declaration order.
    pub flattened: Vec<Flattened<'a>>,
}

/// A `#[flatten]` field: a struct deriving `Attributes`.
pub struct Flattened<'a> {
    pub field: &'a Field,
    pub decl: &'a FlattenDecl,
}

/// One OpenTelemetry instrument, shared by every field that names it.
pub struct Instrument<'a> {
    pub name: String,
    pub kind: InstrumentKind,
    pub value: ValueType,
    pub unit: String,
    pub description: String,
    pub buckets: Option<Vec<f64>>,
    /// Whether the declaration says the name spells its unit on purpose.
    pub unit_in_name: bool,
    /// `opt_in` or `until_opt_in`, and the value; `None` to always record.
    pub gate: Option<(GateKind, String)>,
    /// The aggregation the declaration pins; `None` to follow the default.
    pub aggregation: Option<Aggregation>,
    /// The field that declared it first, for messages.
    pub declared_by: &'a Ident,
}

/// A field recorded into [`Checked::instruments`]`[instrument]`.
pub struct Measured<'a> {
    pub field: &'a Field,
    pub decl: &'a InstrumentDecl,
    pub field_type: FieldType,
    pub instrument: usize,
    /// Indices into [`Checked::attributes`] of the attributes this field's
    /// measurements carry, in declaration order.
    pub attributes: Vec<usize>,
    /// Indices into [`Checked::flattened`] of the groups they carry.
    pub flattened: Vec<usize>,
}

impl Measured<'_> {
    /// The `attr("key" = "value")` pairs of the field.
    pub fn static_attrs(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.decl
            .attrs
            .iter()
            .map(|a| (a.key.value(), a.value.value()))
    }

    /// Whether some `#[attribute]` or flattened group of the struct is not
    /// attached to this field (an `only(..)` that leaves it out).
    pub fn is_scoped(&self, checked: &Checked) -> bool {
        self.attributes.len() != checked.attributes.len()
            || self.flattened.len() != checked.flattened.len()
    }

    /// Whether its measurements carry `#[attribute]` or flattened values.
    pub fn carries_values(&self) -> bool {
        !self.attributes.is_empty() || !self.flattened.is_empty()
    }
}

/// An `#[attribute]` field.
pub struct Attached<'a> {
    pub field: &'a Field,
    pub decl: &'a AttributeDecl,
}

impl Attached<'_> {
    pub fn key(&self) -> String {
        self.decl.key.value()
    }
}

impl Checked<'_> {
    /// Whether `m` records through the set's map of bundles keyed by the
    /// attribute values, rather than through the one bundle the set holds.
    ///
    /// A measure is fixed when no measure of its instrument carries an
    /// attribute value (a struct without any, or an `only(..)` on each that
    /// leaves every field of the instrument out): the instrument then has one
    /// series per measure whatever the values are, and never nears its
    /// cardinality limit, so a handle bound once stays right. An instrument
    /// that some value reaches keeps all its measures in the map, whose
    /// bundles are let go of and bound again, so that a handle bound to the
    /// overflow series while it was full does not stay on it.
    pub fn is_keyed(&self, m: &Measured) -> bool {
        self.measures
            .iter()
            .any(|other| other.instrument == m.instrument && other.carries_values())
    }

    /// Whether some measure records through the map of keyed bundles.
    pub fn has_keyed_measures(&self) -> bool {
        self.measures.iter().any(|m| self.is_keyed(m))
    }

    /// Whether some measure records through the set's own bundle.
    pub fn has_fixed_measures(&self) -> bool {
        self.measures.iter().any(|m| !self.is_keyed(m))
    }

    /// The instrument `m` records into.
    pub fn instrument_of(&self, m: &Measured) -> &Instrument<'_> {
        &self.instruments[m.instrument]
    }
}
