//! What runs on every `record` call: value checks ([`value`]), attribute
//! values borrowed for look-ups ([`attribute`]), bound handles per attribute
//! combination ([`bound`]) and the counting of dropped values ([`warn`]).
//!
//! Generated code reaches these through `__private`; [`AttributeValue`] and
//! [`KeyPart`] are public, for `#[attribute]` fields of your own types.

mod attribute;
mod bound;
mod key;
mod value;
mod warn;

pub use attribute::{AttributeValue, FixedAttributeValue};
pub use bound::{field_attributes, BoundMap, KeyPart, BOUND_LIMIT};
pub use value::{checked, duration_in, Measure, Reject};
pub use warn::{DropWarnings, MissingAttribute};
