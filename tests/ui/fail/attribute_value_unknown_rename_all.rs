use nemo_lens::AttributeValue;

#[derive(AttributeValue, Clone, Copy)]
#[attribute_value(rename_all = "snake")]
enum Outcome {
    Success,
    TimedOut,
}

#[derive(AttributeValue, Clone, Copy)]
#[attribute_value(rename_all = "title case")]
enum Phase {
    Warmup,
}

fn main() {}
