//! Values accepted by `#[attribute(..)]` fields.

use std::borrow::Cow;
use std::sync::Arc;

use opentelemetry::{StringValue, Value};

/// A type an `#[attribute]` field may hold. Empty strings count as absent,
/// as `if model:` does in Python nemo-lens.
pub trait AttributeValue {
    /// The attribute value, or `None` to omit (or default) it.
    fn to_value(&self) -> Option<Value>;
}

fn non_empty(s: &str, value: impl FnOnce() -> Value) -> Option<Value> {
    (!s.is_empty()).then(value)
}

impl AttributeValue for StringValue {
    fn to_value(&self) -> Option<Value> {
        non_empty(self.as_str(), || Value::String(self.clone()))
    }
}

impl AttributeValue for &'static str {
    fn to_value(&self) -> Option<Value> {
        non_empty(self, || Value::from(*self))
    }
}

impl AttributeValue for String {
    fn to_value(&self) -> Option<Value> {
        non_empty(self, || Value::from(self.clone()))
    }
}

impl AttributeValue for Cow<'static, str> {
    fn to_value(&self) -> Option<Value> {
        non_empty(self, || Value::from(self.clone()))
    }
}

impl AttributeValue for Arc<str> {
    fn to_value(&self) -> Option<Value> {
        non_empty(self, || Value::from(self.clone()))
    }
}

macro_rules! scalar {
    ($($ty:ty => $variant:ident as $repr:ty),*) => {$(
        impl AttributeValue for $ty {
            fn to_value(&self) -> Option<Value> {
                Some(Value::$variant(<$repr>::from(*self)))
            }
        }
    )*};
}

scalar!(bool => Bool as bool, i64 => I64 as i64, i32 => I64 as i64, f64 => F64 as f64);
