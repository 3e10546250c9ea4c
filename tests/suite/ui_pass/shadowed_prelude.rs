//! Generated code uses absolute paths, so a caller that shadows `Option`,
//! `Some`, `Result`, `std` and `core` still compiles.
#![allow(dead_code, non_camel_case_types, unused_imports)]

mod shadows {
    pub struct Option;
    pub struct Some;
    pub struct None;
    pub struct Result;
    pub struct Ok;
    pub struct Err;
    pub struct Vec;
    pub struct Default;
    pub mod std {}
    pub mod core {}
    pub struct f64;
}

use shadows::*;

#[derive(nemo_lens::Instruments)]
#[instruments(prefix = "shadow")]
struct Metrics {
    /// A gauge.
    #[gauge]
    value: ::core::option::Option<::core::primitive::f64>,
    /// Request count.
    #[counter(attr("route" = "/"))]
    requests: ::core::option::Option<u64>,
    /// Who asked.
    #[attribute("user")]
    user: ::core::option::Option<::std::string::String>,
}

#[test]
fn shadowed_prelude() {
    use nemo_lens::Instruments as _;
    let meter = nemo_lens::Meter::noop();
    Metrics {
        value: ::core::option::Option::None,
        requests: ::core::option::Option::None,
        user: ::core::option::Option::None,
    }
    .requests(3)
    .user("me".to_owned())
    .record(&meter);
}
