///The instruments of [`Usage`], built once per meter.
struct UsageSet {
    __i0: ::nemo_lens::__private::Option<
        ::nemo_lens::__private::Histogram<::core::primitive::u64>,
    >,
    __i1: ::nemo_lens::__private::Option<
        ::nemo_lens::__private::Counter<::core::primitive::u64>,
    >,
    __bound: __UsageBound,
    __keyed: ::nemo_lens::__private::BoundMap<__UsageBound>,
    __warnings: ::nemo_lens::__private::DropWarnings,
}
/// Bound handles of one combination of attribute values, each bound
/// on its field's first measurement.
#[doc(hidden)]
struct __UsageBound {
    __attrs: ::nemo_lens::__private::Box<[::nemo_lens::__private::KeyValue]>,
    __m0: ::nemo_lens::__private::OnceLock<
        ::nemo_lens::__private::BoundHistogram<::core::primitive::u64>,
    >,
    __m1: ::nemo_lens::__private::OnceLock<
        ::nemo_lens::__private::BoundCounter<::core::primitive::u64>,
    >,
}
impl UsageSet {
    /// How many measurements were dropped (non-finite values, negative
    /// counter increments) since this set was built.
    fn dropped_measurements(&self) -> ::core::primitive::u64 {
        self.__warnings.dropped()
    }
}
const _: () = {
    impl __UsageBound {
        fn new(
            __attrs: ::nemo_lens::__private::Box<[::nemo_lens::__private::KeyValue]>,
        ) -> Self {
            __UsageBound {
                __attrs,
                __m0: ::nemo_lens::__private::OnceLock::new(),
                __m1: ::nemo_lens::__private::OnceLock::new(),
            }
        }
    }
    impl ::core::fmt::Debug for UsageSet {
        fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
            f.debug_struct("UsageSet")
                .field("dropped", &self.__warnings.dropped())
                .finish_non_exhaustive()
        }
    }
};
const _: () = {
    #[automatically_derived]
    impl ::nemo_lens::__private::Instruments for Usage {
        type Set = UsageSet;
        const DESCRIPTORS: &'static [::nemo_lens::__private::Descriptor] = &[
            ::nemo_lens::__private::Descriptor {
                field: "tokens",
                name: "app.token.usage",
                kind: ::nemo_lens::__private::InstrumentKind::Histogram,
                value_type: ::nemo_lens::__private::ValueType::U64,
                unit: "{token}",
                description: "Tokens used.",
                buckets: ::nemo_lens::__private::None,
                attribute_keys: &[],
                attributes: &[],
                static_attributes: &[],
                semconv: ::nemo_lens::__private::SemconvGate::UntilOptIn("app_latest"),
                aggregation: ::nemo_lens::__private::None,
            },
            ::nemo_lens::__private::Descriptor {
                field: "tokens",
                name: "app.usage.tokens",
                kind: ::nemo_lens::__private::InstrumentKind::Counter,
                value_type: ::nemo_lens::__private::ValueType::U64,
                unit: "{token}",
                description: "Tokens used, as a sum.",
                buckets: ::nemo_lens::__private::None,
                attribute_keys: &["app.modality"],
                attributes: &[
                    ::nemo_lens::__private::AttributeDescriptor {
                        key: "app.modality",
                        values: <&'static str as ::nemo_lens::__private::AttributeValue>::FIXED_VALUES,
                        default: ::nemo_lens::__private::Some("text"),
                    },
                ],
                static_attributes: &[],
                semconv: ::nemo_lens::__private::SemconvGate::OptIn("app_latest"),
                aggregation: ::nemo_lens::__private::None,
            },
        ];
        fn build_set(meter: &::nemo_lens::__private::Meter) -> UsageSet {
            let __i0 = if ::nemo_lens::__private::SemconvGate::UntilOptIn("app_latest")
                .is_open(meter.semconv_opt_in())
            {
                ::nemo_lens::__private::Some(
                    meter
                        .u64_histogram("app.token.usage")
                        .with_description("Tokens used.")
                        .with_unit("{token}")
                        .build(),
                )
            } else {
                ::nemo_lens::__private::None
            };
            let __i1 = if ::nemo_lens::__private::SemconvGate::OptIn("app_latest")
                .is_open(meter.semconv_opt_in())
            {
                ::nemo_lens::__private::Some(
                    meter
                        .u64_counter("app.usage.tokens")
                        .with_description("Tokens used, as a sum.")
                        .with_unit("{token}")
                        .build(),
                )
            } else {
                ::nemo_lens::__private::None
            };
            UsageSet {
                __bound: {
                    let __bound = __UsageBound::new(
                        ::nemo_lens::__private::Box::new([]),
                    );
                    if let ::nemo_lens::__private::Some(__h) = &__i0 {
                        let _ = __bound.__m0.set(__h.bind(&[]));
                    }
                    __bound
                },
                __keyed: ::nemo_lens::__private::BoundMap::for_meter(meter),
                __i0,
                __i1,
                __warnings: ::nemo_lens::__private::DropWarnings::new(),
            }
        }
        #[inline]
        fn slot() -> &'static ::nemo_lens::__private::SetSlot {
            static SLOT: ::nemo_lens::__private::SetSlot = ::nemo_lens::__private::SetSlot::new();
            &SLOT
        }
        #[inline]
        fn record_with(&self, set: &UsageSet) {
            {
                let __b = &set.__bound;
                if let ::nemo_lens::__private::Some(__h) = &set.__i0 {
                    if let ::nemo_lens::__private::Some(__raw) = self.tokens {
                        match ::nemo_lens::__private::checked(__raw, false) {
                            ::nemo_lens::__private::Ok(__v) => {
                                __b.__m0
                                    .get_or_init(|| {
                                        __h
                                            .bind(
                                                &::nemo_lens::__private::field_attributes(
                                                    &__b.__attrs,
                                                    ::nemo_lens::__private::Some(&[]),
                                                    &[],
                                                ),
                                            )
                                    })
                                    .record(__v)
                            }
                            ::nemo_lens::__private::Err(__why) => {
                                set.__warnings
                                    .dropped_value("tokens", "app.token.usage", &__raw, __why)
                            }
                        }
                    }
                }
            }
            if !(self.tokens.is_some()) {
                return;
            }
            let __parts = [
                self
                    .modality
                    .as_ref()
                    .and_then(::nemo_lens::__private::AttributeValue::key_part)
                    .or(
                        ::nemo_lens::__private::Some(
                            ::nemo_lens::__private::KeyPart::Str("text"),
                        ),
                    ),
            ];
            let __recorded = set
                .__keyed
                .with(
                    &["app.modality"],
                    &__parts,
                    __UsageBound::new,
                    |__b: &__UsageBound| {
                        if let ::nemo_lens::__private::Some(__h) = &set.__i1 {
                            if let ::nemo_lens::__private::Some(__raw) = self.tokens {
                                match ::nemo_lens::__private::checked(__raw, true) {
                                    ::nemo_lens::__private::Ok(__v) => {
                                        __b.__m1
                                            .get_or_init(|| {
                                                __h
                                                    .bind(
                                                        &::nemo_lens::__private::field_attributes(
                                                            &__b.__attrs,
                                                            ::nemo_lens::__private::None,
                                                            &[],
                                                        ),
                                                    )
                                            })
                                            .add(__v)
                                    }
                                    ::nemo_lens::__private::Err(__why) => {
                                        set.__warnings
                                            .dropped_value("tokens", "app.usage.tokens", &__raw, __why)
                                    }
                                }
                            }
                        }
                    },
                );
            if __recorded.is_none() {
                let mut __attrs: ::nemo_lens::__private::Vec<
                    ::nemo_lens::__private::KeyValue,
                > = ::nemo_lens::__private::Vec::with_capacity(1usize);
                if let ::nemo_lens::__private::Some(__value) = self
                    .modality
                    .as_ref()
                    .and_then(::nemo_lens::__private::AttributeValue::to_value)
                {
                    __attrs
                        .push(
                            ::nemo_lens::__private::KeyValue::new(
                                "app.modality",
                                __value,
                            ),
                        );
                } else {
                    __attrs
                        .push(
                            ::nemo_lens::__private::KeyValue::new("app.modality", "text"),
                        );
                }
                let __base = __attrs.len();
                if let ::nemo_lens::__private::Some(__h) = &set.__i1 {
                    if let ::nemo_lens::__private::Some(__raw) = self.tokens {
                        match ::nemo_lens::__private::checked(__raw, true) {
                            ::nemo_lens::__private::Ok(__v) => __h.add(__v, &__attrs),
                            ::nemo_lens::__private::Err(__why) => {
                                set.__warnings
                                    .dropped_value("tokens", "app.usage.tokens", &__raw, __why)
                            }
                        }
                    }
                }
            }
        }
    }
    #[automatically_derived]
    impl Usage {
        ///Sets [`tokens`](Self::tokens). Tokens used.
        #[must_use]
        #[inline]
        fn tokens(mut self, value: u64) -> Self {
            self.tokens = ::nemo_lens::__private::Some(value);
            self
        }
        /**Sets [`tokens`](Self::tokens). Tokens used.

The same through a borrow, for a value in place.*/
        #[inline]
        fn set_tokens(&mut self, value: u64) -> &mut Self {
            self.tokens = ::nemo_lens::__private::Some(value);
            self
        }
        ///Sets [`modality`](Self::modality). The modality, on the new counter only.
        #[must_use]
        #[inline]
        fn modality(mut self, value: impl ::core::convert::Into<&'static str>) -> Self {
            self.modality = ::nemo_lens::__private::Some(
                ::core::convert::Into::into(value),
            );
            self
        }
        /**Sets [`modality`](Self::modality). The modality, on the new counter only.

The same through a borrow, for a value in place.*/
        #[inline]
        fn set_modality(
            &mut self,
            value: impl ::core::convert::Into<&'static str>,
        ) -> &mut Self {
            self.modality = ::nemo_lens::__private::Some(
                ::core::convert::Into::into(value),
            );
            self
        }
    }
};
