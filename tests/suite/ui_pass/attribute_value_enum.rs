//! An enum deriving `AttributeValue`, recorded through an `Instruments`
//! field, compiles in a crate that shadows the prelude and `core`: the
//! generated code uses absolute paths.
#![allow(dead_code, non_camel_case_types, unused_imports)]

mod shadows {
    pub struct Option;
    pub struct Some;
    pub struct None;
    pub struct Result;
    pub struct Ok;
    pub struct str;
    pub mod std {}
    pub mod core {}
    pub mod fmt {}
}

use shadows::*;

#[derive(nemo_lens::AttributeValue, Clone, Copy, PartialEq, Debug)]
#[attribute_value(rename_all = "kebab-case")]
enum Outcome {
    Success,
    TimedOut,
    #[attribute_value(rename = "error")]
    Failure,
}

#[derive(nemo_lens::Instruments)]
struct Jobs {
    /// Jobs finished.
    #[counter("app.job.finished")]
    finished: ::core::option::Option<u64>,
    /// How the job ended.
    #[attribute("app.job.outcome")]
    outcome: ::core::option::Option<Outcome>,
}

#[test]
fn attribute_value_enum() {
    use nemo_lens::{AttributeValue as _, Instruments as _};
    assert_eq!(
        Outcome::ALL,
        [Outcome::Success, Outcome::TimedOut, Outcome::Failure]
    );
    assert_eq!(Outcome::TimedOut.as_str(), "timed-out");
    assert_eq!(format!("{}", Outcome::Failure), "error");
    assert_eq!(
        Outcome::FIXED_VALUES,
        ::core::option::Option::Some(&["success", "timed-out", "error"][..])
    );
    Jobs {
        finished: ::core::option::Option::None,
        outcome: ::core::option::Option::None,
    }
    .outcome(Outcome::TimedOut)
    .finished(1)
    .record(&nemo_lens::Meter::noop());
}
