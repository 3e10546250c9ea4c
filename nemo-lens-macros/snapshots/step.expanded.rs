///The instruments of [`Step`], built once per meter.
struct StepSet {
    __i0: ::nemo_lens::__private::Gauge<::core::primitive::f64>,
    __i1: ::nemo_lens::__private::Counter<::core::primitive::u64>,
    __attrs1: [::nemo_lens::__private::KeyValue; 1usize],
    __bound: __StepBound,
    __warnings: ::nemo_lens::__private::DropWarnings,
}
/// Bound handles of one combination of attribute values, each bound
/// on its field's first measurement.
#[doc(hidden)]
struct __StepBound {
    __attrs: ::nemo_lens::__private::Box<[::nemo_lens::__private::KeyValue]>,
    __m0: ::nemo_lens::__private::OnceLock<
        ::nemo_lens::__private::BoundGauge<::core::primitive::f64>,
    >,
    __m1: ::nemo_lens::__private::OnceLock<
        ::nemo_lens::__private::BoundCounter<::core::primitive::u64>,
    >,
}
impl StepSet {
    /// How many measurements were dropped (non-finite values, negative
    /// counter increments) since this set was built.
    fn dropped_measurements(&self) -> ::core::primitive::u64 {
        self.__warnings.dropped()
    }
}
const _: () = {
    impl __StepBound {
        fn new(
            __attrs: ::nemo_lens::__private::Box<[::nemo_lens::__private::KeyValue]>,
        ) -> Self {
            __StepBound {
                __attrs,
                __m0: ::nemo_lens::__private::OnceLock::new(),
                __m1: ::nemo_lens::__private::OnceLock::new(),
            }
        }
    }
    impl ::core::fmt::Debug for StepSet {
        fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
            f.debug_struct("StepSet")
                .field("dropped", &self.__warnings.dropped())
                .finish_non_exhaustive()
        }
    }
};
const _: () = {
    #[automatically_derived]
    impl ::nemo_lens::__private::Instruments for Step {
        type Set = StepSet;
        const DESCRIPTORS: &'static [::nemo_lens::__private::Descriptor] = &[
            ::nemo_lens::__private::Descriptor {
                field: "loss",
                name: "app.loss",
                kind: ::nemo_lens::__private::InstrumentKind::Gauge,
                value_type: ::nemo_lens::__private::ValueType::F64,
                unit: "",
                description: "Training loss.",
                buckets: ::nemo_lens::__private::None,
                attribute_keys: &[],
                attributes: &[],
                static_attributes: &[],
                semconv: ::nemo_lens::__private::SemconvGate::Always,
                aggregation: ::nemo_lens::__private::None,
            },
            ::nemo_lens::__private::Descriptor {
                field: "tokens",
                name: "app.tokens",
                kind: ::nemo_lens::__private::InstrumentKind::Counter,
                value_type: ::nemo_lens::__private::ValueType::U64,
                unit: "{token}",
                description: "Tokens seen.",
                buckets: ::nemo_lens::__private::None,
                attribute_keys: &["phase"],
                attributes: &[
                    ::nemo_lens::__private::AttributeDescriptor {
                        key: "phase",
                        values: ::nemo_lens::__private::Some(&["train"]),
                        default: ::nemo_lens::__private::Some("train"),
                    },
                ],
                static_attributes: &[("phase", "train")],
                semconv: ::nemo_lens::__private::SemconvGate::Always,
                aggregation: ::nemo_lens::__private::None,
            },
        ];
        fn build_set(meter: &::nemo_lens::__private::Meter) -> StepSet {
            let __i0 = meter
                .f64_gauge("app.loss")
                .with_description("Training loss.")
                .build();
            let __i1 = meter
                .u64_counter("app.tokens")
                .with_description("Tokens seen.")
                .with_unit("{token}")
                .build();
            StepSet {
                __attrs1: [::nemo_lens::__private::KeyValue::new("phase", "train")],
                __bound: {
                    let __bound = __StepBound::new(::nemo_lens::__private::Box::new([]));
                    let _ = __bound.__m0.set(__i0.bind(&[]));
                    __bound
                },
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
        fn record_with(&self, set: &StepSet) {
            let __b = &set.__bound;
            if let ::nemo_lens::__private::Some(__raw) = self.loss {
                match ::nemo_lens::__private::checked(__raw, false) {
                    ::nemo_lens::__private::Ok(__v) => {
                        __b.__m0
                            .get_or_init(|| {
                                set
                                    .__i0
                                    .bind(
                                        &::nemo_lens::__private::field_attributes(
                                            &__b.__attrs,
                                            ::nemo_lens::__private::None,
                                            &[],
                                        ),
                                    )
                            })
                            .record(__v)
                    }
                    ::nemo_lens::__private::Err(__why) => {
                        set.__warnings.dropped_value("loss", "app.loss", &__raw, __why)
                    }
                }
            }
            if let ::nemo_lens::__private::Some(__raw) = self.tokens {
                match ::nemo_lens::__private::checked(__raw, true) {
                    ::nemo_lens::__private::Ok(__v) => {
                        __b.__m1
                            .get_or_init(|| {
                                set
                                    .__i1
                                    .bind(
                                        &::nemo_lens::__private::field_attributes(
                                            &__b.__attrs,
                                            ::nemo_lens::__private::None,
                                            &set.__attrs1,
                                        ),
                                    )
                            })
                            .add(__v)
                    }
                    ::nemo_lens::__private::Err(__why) => {
                        set.__warnings
                            .dropped_value("tokens", "app.tokens", &__raw, __why)
                    }
                }
            }
        }
    }
    #[automatically_derived]
    impl Step {
        ///Sets [`loss`](Self::loss). Training loss.
        #[must_use]
        #[inline]
        fn loss(mut self, value: f64) -> Self {
            self.loss = ::nemo_lens::__private::Some(value);
            self
        }
        /**Sets [`loss`](Self::loss). Training loss.

The same through a borrow, for a value in place.*/
        #[inline]
        fn set_loss(&mut self, value: f64) -> &mut Self {
            self.loss = ::nemo_lens::__private::Some(value);
            self
        }
        ///Sets [`tokens`](Self::tokens). Tokens seen.
        #[must_use]
        #[inline]
        fn tokens(mut self, value: u64) -> Self {
            self.tokens = ::nemo_lens::__private::Some(value);
            self
        }
        /**Sets [`tokens`](Self::tokens). Tokens seen.

The same through a borrow, for a value in place.*/
        #[inline]
        fn set_tokens(&mut self, value: u64) -> &mut Self {
            self.tokens = ::nemo_lens::__private::Some(value);
            self
        }
    }
};
