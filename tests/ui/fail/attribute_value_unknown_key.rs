use nemo_lens::AttributeValue;

#[derive(AttributeValue, Clone, Copy)]
#[attribute_value(renme_all = "snake_case", rename = "outcome")]
enum Outcome {
    #[attribute_value(rename_all = "lowercase", renam = "ok")]
    Success,
    #[attribute_value(skip)]
    Failure,
}

fn main() {
    let _ = Outcome::Success.as_str();
}
