//! The expansion of small structs, pretty-printed and compared with the
//! committed snapshots in `nemo-lens-macros/snapshots/`, so that every change to
//! the generated-code contract shows up in review. After an intended change:
//! `UPDATE_EXPECT=1 cargo test -p nemo-lens-macros`, then read the diff.

use expect_test::{expect_file, ExpectFile};
use syn::DeriveInput;

fn assert_expands(input: DeriveInput, expected: ExpectFile) {
    let tokens = super::derive(&input);
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as items");
    expected.assert_eq(&prettyplease::unparse(&file));
}

#[test]
fn a_struct_without_attributes() {
    assert_expands(
        syn::parse_quote! {
            #[instruments(prefix = "app")]
            struct Step {
                /// Training loss.
                #[gauge]
                loss: Option<f64>,
                /// Tokens seen.
                #[counter(unit = "{token}", attr("phase" = "train"))]
                tokens: Option<u64>,
            }
        },
        expect_file!["../../snapshots/step.expanded.rs"],
    );
}

#[test]
fn a_struct_with_a_scoped_attribute() {
    assert_expands(
        syn::parse_quote! {
            struct Call {
                /// Call duration.
                #[histogram("app.call.duration", unit = "s")]
                duration_s: Option<f64>,
                /// Bytes received.
                #[counter("app.call.received", unit = "By")]
                bytes: Option<u64>,
                /// The model called.
                #[attribute("app.model")]
                model: Option<String>,
                /// Why the call failed; on the duration only.
                #[attribute("error.type", only(duration_s))]
                error_type: Option<&'static str>,
            }
        },
        expect_file!["../../snapshots/call.expanded.rs"],
    );
}

#[test]
fn a_field_under_old_and_new_convention_names() {
    assert_expands(
        syn::parse_quote! {
            struct Usage {
                /// Tokens used.
                #[histogram("app.token.usage", unit = "{token}", until_opt_in = "app_latest")]
                #[counter(
                    "app.usage.tokens",
                    unit = "{token}",
                    description = "Tokens used, as a sum.",
                    opt_in = "app_latest"
                )]
                tokens: Option<u64>,
                /// The modality, on the new counter only.
                #[attribute("app.modality", default = "text", only("app.usage.tokens"))]
                modality: Option<&'static str>,
            }
        },
        expect_file!["../../snapshots/usage.expanded.rs"],
    );
}
