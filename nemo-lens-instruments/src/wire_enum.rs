//! `wire_enum!`: the fixed value sets of attributes, as enums whose wire
//! values are written once, so a misspelled value does not compile and the
//! number of series stays bounded.

/// Implements `as_str`, `Display` and [`AttributeValue`] from one table of
/// variants and their wire values, so the two cannot drift apart.
macro_rules! wire_enum {
    ($name:ident { $($(#[$doc:meta])* $variant:ident => $wire:literal),* $(,)? }) => {
        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The value as exported.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire),*
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::nemo_lens_core::AttributeValue for $name {
            #[inline]
            fn key_part(&self) -> Option<::nemo_lens_core::KeyPart<'_>> {
                Some(::nemo_lens_core::KeyPart::Str(self.as_str()))
            }

            fn to_value(&self) -> Option<::opentelemetry::Value> {
                Some(::opentelemetry::Value::from(self.as_str()))
            }
        }
    };
}

pub(crate) use wire_enum;
