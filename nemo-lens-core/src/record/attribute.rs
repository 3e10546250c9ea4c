//! Values accepted by `#[attribute(..)]` fields.

use std::borrow::Cow;
use std::sync::Arc;

use opentelemetry::{StringValue, Value};

use super::bound::KeyPart;

/// A type an `#[attribute]` field may hold. Empty strings count as absent,
/// as `if model:` does in Python nemo-lens.
///
/// The two methods must describe the same value: a set exports the value
/// built from [`key_part`](Self::key_part) while it binds handles per value,
/// and the one from [`to_value`](Self::to_value) past its bound limit.
///
/// Derive it for an enum of the values an attribute may take, so that a
/// misspelled value does not compile and the series count stays bounded
/// (`rename_all` and `rename` take serde's spellings):
///
/// ```
/// use nemo_lens::AttributeValue;
///
/// #[derive(AttributeValue, Clone, Copy)]
/// #[attribute_value(rename_all = "snake_case")]
/// enum Outcome { Success, TimedOut }
///
/// assert_eq!(Outcome::TimedOut.as_str(), "timed_out");
/// assert_eq!(Outcome::FIXED_VALUES, Some(&["success", "timed_out"][..]));
/// ```
///
/// or implement it by hand for other types:
///
/// ```
/// use nemo_lens::{AttributeValue, KeyPart};
/// use nemo_lens::opentelemetry::Value;
///
/// #[derive(Clone, Copy)]
/// enum Outcome { Success, Failure }
///
/// impl Outcome {
///     fn as_str(self) -> &'static str {
///         match self { Outcome::Success => "success", Outcome::Failure => "failure" }
///     }
/// }
///
/// impl AttributeValue for Outcome {
///     fn key_part(&self) -> Option<KeyPart<'_>> { Some(KeyPart::Str(self.as_str())) }
///     fn to_value(&self) -> Option<Value> { Some(Value::from(self.as_str())) }
/// }
/// ```
pub trait AttributeValue {
    /// The wire values of a type with a fixed set of them: enums deriving
    /// `AttributeValue`, and `bool`. `None` for free-form values.
    const FIXED_VALUES: Option<&'static [&'static str]> = None;

    /// The value borrowed, for look-ups; `None` to omit (or default) it.
    fn key_part(&self) -> Option<KeyPart<'_>>;

    /// The attribute value, or `None` to omit (or default) it.
    fn to_value(&self) -> Option<Value>;
}

/// An [`AttributeValue`] with a fixed set of values, listed in
/// [`ALL`](Self::ALL): an enum deriving `AttributeValue`, or `bool`.
///
/// Each value in `ALL` exports the string at the same position in
/// [`AttributeValue::FIXED_VALUES`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no fixed set of values",
    label = "a free-form attribute",
    note = "`start_at_zero` creates one series per combination of the instrument's attribute values, so each must be an enum deriving `AttributeValue` (or bool)"
)]
pub trait FixedAttributeValue: AttributeValue + Copy + 'static {
    /// Every value, in declaration order.
    const ALL: &'static [Self];
}

macro_rules! string {
    ($($ty:ty => |$s:ident| $value:expr),* $(,)?) => {$(
        impl AttributeValue for $ty {
            #[inline]
            fn key_part(&self) -> Option<KeyPart<'_>> {
                let text: &str = self.as_ref();
                (!text.is_empty()).then_some(KeyPart::Str(text))
            }

            fn to_value(&self) -> Option<Value> {
                let $s = self;
                let text: &str = $s.as_ref();
                (!text.is_empty()).then(|| $value)
            }
        }
    )*};
}

string! {
    StringValue => |s| Value::String(s.clone()),
    &'static str => |s| Value::from(*s),
    String => |s| Value::from(s.clone()),
    Cow<'static, str> => |s| Value::from(s.clone()),
    Arc<str> => |s| Value::from(s.clone()),
}

macro_rules! scalar {
    ($($ty:ty => $variant:ident as $repr:ty),*) => {$(
        impl AttributeValue for $ty {
            #[inline]
            fn key_part(&self) -> Option<KeyPart<'_>> {
                Some(KeyPart::$variant(<$repr>::from(*self)))
            }

            fn to_value(&self) -> Option<Value> {
                Some(Value::$variant(<$repr>::from(*self)))
            }
        }
    )*};
}

impl AttributeValue for bool {
    const FIXED_VALUES: Option<&'static [&'static str]> = Some(&["false", "true"]);

    #[inline]
    fn key_part(&self) -> Option<KeyPart<'_>> {
        Some(KeyPart::Bool(*self))
    }

    fn to_value(&self) -> Option<Value> {
        Some(Value::Bool(*self))
    }
}

impl FixedAttributeValue for bool {
    const ALL: &'static [bool] = &[false, true];
}

scalar!(
    i64 => I64 as i64,
    i32 => I64 as i64,
    i16 => I64 as i64,
    i8 => I64 as i64,
    u32 => I64 as i64,
    u16 => I64 as i64,
    u8 => I64 as i64,
    f64 => F64 as f64
);
