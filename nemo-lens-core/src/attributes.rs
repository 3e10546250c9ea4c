//! Attribute groups: one set of `#[attribute]` fields shared by several
//! instrument sets, declared once with `#[derive(Attributes)]` and
//! `#[flatten]`ed into each `#[derive(Instruments)]` struct.

use opentelemetry::KeyValue;

use crate::record::KeyPart;
use crate::AttributeDescriptor;

/// A struct of `#[attribute("key")]` fields that instrument sets flatten.
///
/// Derive it; the derive checks the keys and defaults as the `Instruments`
/// derive does for its own attribute fields, and the set's derive checks at
/// compile time that no key is both flattened and declared in the set.
///
/// ```
/// use nemo_lens::{Attributes, Instruments, Meter};
///
/// /// What every set of this service is labelled with.
/// #[derive(Attributes, Default, Clone)]
/// pub struct Service {
///     /// The model served.
///     #[attribute("gen_ai.request.model")]
///     pub model: Option<String>,
///     /// The serving region.
///     #[attribute("cloud.region", default = "local")]
///     pub region: Option<String>,
/// }
///
/// /// One request.
/// #[derive(Instruments, Default)]
/// pub struct Request {
///     /// Time to answer a request.
///     #[histogram("app.request.duration", unit = "s")]
///     pub duration_s: Option<f64>,
///     /// The service's attributes, on every instrument of the set.
///     #[flatten]
///     pub service: Service,
/// }
///
/// let service = Service::default().model("llama-3-8b");
/// Request::default().duration_s(0.2).service(service).record(&Meter::noop());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an attribute group",
    label = "flattened here",
    note = "a #[flatten] field holds a struct of #[attribute(\"key\")] fields deriving `Attributes`"
)]
pub trait Attributes: Default + 'static {
    /// The attribute keys, in declaration order.
    const KEYS: &'static [&'static str];

    /// Each attribute's key, fixed values and default, in the order of
    /// [`KEYS`](Self::KEYS): what the descriptors of a set that flattens the
    /// group list.
    const ATTRIBUTES: &'static [AttributeDescriptor];

    /// Writes each attribute's look-up value (its default when unset) into
    /// `parts`, which has one slot per key.
    fn key_parts<'a>(&'a self, parts: &mut [Option<KeyPart<'a>>]);

    /// Appends each attribute that has a value (or a default).
    fn push_key_values(&self, attributes: &mut Vec<KeyValue>);
}

/// The keys of `groups` one after another, as an array of their total
/// length `N`: how a set's own keys and its flattened groups' keys become
/// one constant.
///
/// # Panics
///
/// At compile time (it is evaluated in constants) when `N` is not the total.
pub const fn concat_keys<const N: usize>(groups: &[&[&'static str]]) -> [&'static str; N] {
    concat("", groups)
}

/// The attribute descriptors of `groups` one after another, as
/// [`concat_keys`] does for the keys, for the descriptors of a set that
/// flattens groups.
pub const fn concat_attributes<const N: usize>(
    groups: &[&[AttributeDescriptor]],
) -> [AttributeDescriptor; N] {
    let none = AttributeDescriptor {
        key: "",
        values: None,
        default: None,
    };
    concat(none, groups)
}

/// `groups` one after another in an array of `N`, starting from `filler`
/// (a const fn cannot leave elements uninitialised).
const fn concat<T: Copy, const N: usize>(filler: T, groups: &[&[T]]) -> [T; N] {
    let mut out = [filler; N];
    let mut at = 0;
    let mut g = 0;
    while g < groups.len() {
        let mut k = 0;
        while k < groups[g].len() {
            out[at] = groups[g][k];
            at += 1;
            k += 1;
        }
        g += 1;
    }
    assert!(at == N, "concat: N is not the number of elements");
    out
}

/// Whether no key appears twice among `groups`: a set refuses, at compile
/// time, an attribute both flattened and declared (or flattened twice).
pub const fn keys_disjoint(groups: &[&[&'static str]]) -> bool {
    let mut g = 0;
    while g < groups.len() {
        let mut k = 0;
        while k < groups[g].len() {
            let mut h = g + 1;
            while h < groups.len() {
                let mut j = 0;
                while j < groups[h].len() {
                    if str_eq(groups[g][k], groups[h][j]) {
                        return false;
                    }
                    j += 1;
                }
                h += 1;
            }
            k += 1;
        }
        g += 1;
    }
    true
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_concatenated_in_order() {
        const KEYS: [&str; 3] = concat_keys(&[&["a"], &[], &["b", "c"]]);
        assert_eq!(KEYS, ["a", "b", "c"]);
    }

    #[test]
    fn a_key_in_two_groups_is_found() {
        assert!(keys_disjoint(&[&["a", "b"], &["c"], &[]]));
        assert!(!keys_disjoint(&[&["a", "b"], &["c", "b"]]));
        assert!(!keys_disjoint(&[&["x"], &["y"], &["x"]]));
        assert!(keys_disjoint(&[&["ab"], &["a"]]));
    }
}
