use nemo_lens::AttributeValue;

#[derive(AttributeValue)]
enum Outcome {
    Success,
    Failure,
}

fn main() {}
