use nemo_lens::AttributeValue;

#[derive(AttributeValue)]
struct Outcome {
    success: bool,
}

#[derive(AttributeValue)]
union Raw {
    code: u32,
}

fn main() {}
