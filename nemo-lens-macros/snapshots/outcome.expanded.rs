const _: () = {
    const fn wire(value: &Outcome) -> &'static ::core::primitive::str {
        match *value {
            Outcome::Success => "success",
            Outcome::TimedOut => "timed_out",
            Outcome::Failure => "error",
        }
    }
    #[automatically_derived]
    impl Outcome {
        /// Every value, in declaration order.
        pub const ALL: &'static [Outcome] = &[
            Outcome::Success,
            Outcome::TimedOut,
            Outcome::Failure,
        ];
        /// The value as exported.
        pub const fn as_str(self) -> &'static ::core::primitive::str {
            wire(&self)
        }
    }
    #[automatically_derived]
    impl ::nemo_lens::__private::Display for Outcome {
        fn fmt(
            &self,
            f: &mut ::nemo_lens::__private::Formatter<'_>,
        ) -> ::nemo_lens::__private::FmtResult {
            ::nemo_lens::__private::Formatter::write_str(f, wire(self))
        }
    }
    #[automatically_derived]
    impl ::nemo_lens::__private::AttributeValue for Outcome {
        const FIXED_VALUES: ::nemo_lens::__private::Option<
            &'static [&'static ::core::primitive::str],
        > = ::nemo_lens::__private::Some(&["success", "timed_out", "error"]);
        #[inline]
        fn key_part(
            &self,
        ) -> ::nemo_lens::__private::Option<::nemo_lens::__private::KeyPart<'_>> {
            ::nemo_lens::__private::Some(
                ::nemo_lens::__private::KeyPart::Str(wire(self)),
            )
        }
        #[inline]
        fn to_value(
            &self,
        ) -> ::nemo_lens::__private::Option<::nemo_lens::__private::Value> {
            ::nemo_lens::__private::Some(::nemo_lens::__private::Value::from(wire(self)))
        }
    }
    #[automatically_derived]
    impl ::nemo_lens::__private::FixedAttributeValue for Outcome {
        const ALL: &'static [Outcome] = Outcome::ALL;
    }
};
