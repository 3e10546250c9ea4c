use nemo_lens::AttributeValue;

#[derive(AttributeValue, Clone, Copy)]
enum Outcome {
    Success,
    #[attribute_value(rename = "")]
    Unknown,
}

fn main() {}
