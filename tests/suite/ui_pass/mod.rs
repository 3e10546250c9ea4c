//! What the derive must accept: each case was a trybuild `pass` case (a
//! program that compiles and runs), now a test module of this binary, so
//! that trybuild (`tests/ui`) builds only what must fail to compile (`cargo
//! check`, no code generated or linked). Each file is one case; its doc
//! comment says what it holds.

mod attribute_value_enum;
mod exponential_histogram;
mod guard_fields_named_like_its_methods;
mod megatron_custom_set;
mod renamed_metric;
mod several_values_per_record;
mod shadowed_prelude;
mod shared_and_scoped;
mod unit_in_name;
