use nemo_lens::AttributeValue;

#[derive(AttributeValue, Clone, Copy)]
#[attribute_value(rename_all = "snake_case")]
enum Outcome {
    TimedOut,
    #[attribute_value(rename = "timed_out")]
    Timeout,
    Success,
    #[attribute_value(rename = "failure")]
    Failed,
    Failure,
}

fn main() {}
