//! The expansion of a small enum, pretty-printed and compared with the
//! committed snapshot in `nemo-lens-macros/snapshots/`. After an intended
//! change: `UPDATE_EXPECT=1 cargo test -p nemo-lens-macros`, then read the
//! diff.

use expect_test::expect_file;

#[test]
fn an_enum_with_rename_all_and_a_rename() {
    let input = syn::parse_quote! {
        #[attribute_value(rename_all = "snake_case")]
        enum Outcome {
            Success,
            TimedOut,
            #[attribute_value(rename = "error")]
            Failure,
        }
    };
    let file: syn::File = syn::parse2(super::derive(&input)).expect("the expansion parses");
    expect_file!["../../snapshots/outcome.expanded.rs"].assert_eq(&prettyplease::unparse(&file));
}
