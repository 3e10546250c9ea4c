///The instruments of [`Call`], built once per meter.
struct CallSet {
    __i0: ::nemo_lens::__private::Histogram<::core::primitive::f64>,
    __i1: ::nemo_lens::__private::Counter<::core::primitive::u64>,
    __keyed: ::nemo_lens::__private::BoundMap<__CallBound>,
    __warnings: ::nemo_lens::__private::DropWarnings,
}
/// Bound handles of one combination of attribute values, each bound
/// on its field's first measurement.
#[doc(hidden)]
struct __CallBound {
    __attrs: ::nemo_lens::__private::Box<[::nemo_lens::__private::KeyValue]>,
    __m0: ::nemo_lens::__private::OnceLock<
        ::nemo_lens::__private::BoundHistogram<::core::primitive::f64>,
    >,
    __m1: ::nemo_lens::__private::OnceLock<
        ::nemo_lens::__private::BoundCounter<::core::primitive::u64>,
    >,
}
impl CallSet {
    /// How many measurements were dropped (non-finite values, negative
    /// counter increments) since this set was built.
    fn dropped_measurements(&self) -> ::core::primitive::u64 {
        self.__warnings.dropped()
    }
}
const _: () = {
    impl __CallBound {
        fn new(
            __attrs: ::nemo_lens::__private::Box<[::nemo_lens::__private::KeyValue]>,
        ) -> Self {
            __CallBound {
                __attrs,
                __m0: ::nemo_lens::__private::OnceLock::new(),
                __m1: ::nemo_lens::__private::OnceLock::new(),
            }
        }
    }
    impl ::core::fmt::Debug for CallSet {
        fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
            f.debug_struct("CallSet")
                .field("dropped", &self.__warnings.dropped())
                .finish_non_exhaustive()
        }
    }
};
const _: () = {
    #[automatically_derived]
    impl ::nemo_lens::__private::Instruments for Call {
        type Set = CallSet;
        const DESCRIPTORS: &'static [::nemo_lens::__private::Descriptor] = &[
            ::nemo_lens::__private::Descriptor {
                field: "duration_s",
                name: "app.call.duration",
                kind: ::nemo_lens::__private::InstrumentKind::Histogram,
                value_type: ::nemo_lens::__private::ValueType::F64,
                unit: "s",
                description: "Call duration.",
                buckets: ::nemo_lens::__private::None,
                attribute_keys: &["app.model", "error.type"],
                attributes: &[
                    ::nemo_lens::__private::AttributeDescriptor {
                        key: "app.model",
                        values: <String as ::nemo_lens::__private::AttributeValue>::FIXED_VALUES,
                        default: ::nemo_lens::__private::None,
                    },
                    ::nemo_lens::__private::AttributeDescriptor {
                        key: "error.type",
                        values: <&'static str as ::nemo_lens::__private::AttributeValue>::FIXED_VALUES,
                        default: ::nemo_lens::__private::None,
                    },
                ],
                static_attributes: &[],
                semconv: ::nemo_lens::__private::SemconvGate::Always,
                aggregation: ::nemo_lens::__private::None,
            },
            ::nemo_lens::__private::Descriptor {
                field: "bytes",
                name: "app.call.received",
                kind: ::nemo_lens::__private::InstrumentKind::Counter,
                value_type: ::nemo_lens::__private::ValueType::U64,
                unit: "By",
                description: "Bytes received.",
                buckets: ::nemo_lens::__private::None,
                attribute_keys: &["app.model"],
                attributes: &[
                    ::nemo_lens::__private::AttributeDescriptor {
                        key: "app.model",
                        values: <String as ::nemo_lens::__private::AttributeValue>::FIXED_VALUES,
                        default: ::nemo_lens::__private::None,
                    },
                ],
                static_attributes: &[],
                semconv: ::nemo_lens::__private::SemconvGate::Always,
                aggregation: ::nemo_lens::__private::None,
            },
        ];
        fn build_set(meter: &::nemo_lens::__private::Meter) -> CallSet {
            let __i0 = meter
                .f64_histogram("app.call.duration")
                .with_description("Call duration.")
                .with_unit("s")
                .build();
            let __i1 = meter
                .u64_counter("app.call.received")
                .with_description("Bytes received.")
                .with_unit("By")
                .build();
            CallSet {
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
        fn record_with(&self, set: &CallSet) {
            if !(self.duration_s.is_some() || self.bytes.is_some()) {
                return;
            }
            let __parts = [
                self
                    .model
                    .as_ref()
                    .and_then(::nemo_lens::__private::AttributeValue::key_part),
                self
                    .error_type
                    .as_ref()
                    .and_then(::nemo_lens::__private::AttributeValue::key_part),
            ];
            let __recorded = set
                .__keyed
                .with(
                    &["app.model", "error.type"],
                    &__parts,
                    __CallBound::new,
                    |__b: &__CallBound| {
                        if let ::nemo_lens::__private::Some(__raw) = self.duration_s {
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
                                    set.__warnings
                                        .dropped_value(
                                            "duration_s",
                                            "app.call.duration",
                                            &__raw,
                                            __why,
                                        )
                                }
                            }
                        }
                        if let ::nemo_lens::__private::Some(__raw) = self.bytes {
                            match ::nemo_lens::__private::checked(__raw, true) {
                                ::nemo_lens::__private::Ok(__v) => {
                                    __b.__m1
                                        .get_or_init(|| {
                                            set
                                                .__i1
                                                .bind(
                                                    &::nemo_lens::__private::field_attributes(
                                                        &__b.__attrs,
                                                        ::nemo_lens::__private::Some(&["app.model"]),
                                                        &[],
                                                    ),
                                                )
                                        })
                                        .add(__v)
                                }
                                ::nemo_lens::__private::Err(__why) => {
                                    set.__warnings
                                        .dropped_value("bytes", "app.call.received", &__raw, __why)
                                }
                            }
                        }
                    },
                );
            if __recorded.is_none() {
                let mut __attrs: ::nemo_lens::__private::Vec<
                    ::nemo_lens::__private::KeyValue,
                > = ::nemo_lens::__private::Vec::with_capacity(2usize);
                if let ::nemo_lens::__private::Some(__value) = self
                    .model
                    .as_ref()
                    .and_then(::nemo_lens::__private::AttributeValue::to_value)
                {
                    __attrs
                        .push(
                            ::nemo_lens::__private::KeyValue::new("app.model", __value),
                        );
                }
                if let ::nemo_lens::__private::Some(__value) = self
                    .error_type
                    .as_ref()
                    .and_then(::nemo_lens::__private::AttributeValue::to_value)
                {
                    __attrs
                        .push(
                            ::nemo_lens::__private::KeyValue::new("error.type", __value),
                        );
                }
                let __base = __attrs.len();
                if let ::nemo_lens::__private::Some(__raw) = self.duration_s {
                    match ::nemo_lens::__private::checked(__raw, false) {
                        ::nemo_lens::__private::Ok(__v) => set.__i0.record(__v, &__attrs),
                        ::nemo_lens::__private::Err(__why) => {
                            set.__warnings
                                .dropped_value(
                                    "duration_s",
                                    "app.call.duration",
                                    &__raw,
                                    __why,
                                )
                        }
                    }
                }
                if let ::nemo_lens::__private::Some(__raw) = self.bytes {
                    match ::nemo_lens::__private::checked(__raw, true) {
                        ::nemo_lens::__private::Ok(__v) => {
                            set.__i1
                                .add(
                                    __v,
                                    &::nemo_lens::__private::field_attributes(
                                        &__attrs,
                                        ::nemo_lens::__private::Some(&["app.model"]),
                                        &[],
                                    ),
                                )
                        }
                        ::nemo_lens::__private::Err(__why) => {
                            set.__warnings
                                .dropped_value("bytes", "app.call.received", &__raw, __why)
                        }
                    }
                }
            }
        }
    }
    #[automatically_derived]
    impl Call {
        ///Sets [`duration_s`](Self::duration_s). Call duration.
        #[must_use]
        #[inline]
        fn duration_s(mut self, value: f64) -> Self {
            self.duration_s = ::nemo_lens::__private::Some(value);
            self
        }
        /**Sets [`duration_s`](Self::duration_s). Call duration.

The same through a borrow, for a value in place.*/
        #[inline]
        fn set_duration_s(&mut self, value: f64) -> &mut Self {
            self.duration_s = ::nemo_lens::__private::Some(value);
            self
        }
        ///Sets [`bytes`](Self::bytes). Bytes received.
        #[must_use]
        #[inline]
        fn bytes(mut self, value: u64) -> Self {
            self.bytes = ::nemo_lens::__private::Some(value);
            self
        }
        /**Sets [`bytes`](Self::bytes). Bytes received.

The same through a borrow, for a value in place.*/
        #[inline]
        fn set_bytes(&mut self, value: u64) -> &mut Self {
            self.bytes = ::nemo_lens::__private::Some(value);
            self
        }
        ///Sets [`model`](Self::model). The model called.
        #[must_use]
        #[inline]
        fn model(mut self, value: impl ::core::convert::Into<String>) -> Self {
            self.model = ::nemo_lens::__private::Some(
                ::core::convert::Into::into(value),
            );
            self
        }
        /**Sets [`model`](Self::model). The model called.

The same through a borrow, for a value in place.*/
        #[inline]
        fn set_model(&mut self, value: impl ::core::convert::Into<String>) -> &mut Self {
            self.model = ::nemo_lens::__private::Some(
                ::core::convert::Into::into(value),
            );
            self
        }
        ///Sets [`error_type`](Self::error_type). Why the call failed; on the duration only.
        #[must_use]
        #[inline]
        fn error_type(
            mut self,
            value: impl ::core::convert::Into<&'static str>,
        ) -> Self {
            self.error_type = ::nemo_lens::__private::Some(
                ::core::convert::Into::into(value),
            );
            self
        }
        /**Sets [`error_type`](Self::error_type). Why the call failed; on the duration only.

The same through a borrow, for a value in place.*/
        #[inline]
        fn set_error_type(
            &mut self,
            value: impl ::core::convert::Into<&'static str>,
        ) -> &mut Self {
            self.error_type = ::nemo_lens::__private::Some(
                ::core::convert::Into::into(value),
            );
            self
        }
    }
};
