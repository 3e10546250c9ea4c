//! What the derive's descriptors say of each attribute: the fixed values of
//! enums and `bool`s, free-form strings and numbers, defaults, static
//! pairs, and the most series that follows.

use nemo_lens::{AttributeDescriptor, AttributeValue, Instruments};

#[derive(AttributeValue, Clone, Copy)]
#[attribute_value(rename_all = "snake_case")]
enum Outcome {
    Success,
    TimedOut,
}

#[derive(Instruments, Default)]
struct Jobs {
    /// Jobs finished.
    #[counter("app.job.finished", unit = "{job}", attr("app.queue" = "main"))]
    finished: Option<u64>,
    /// Time a job ran.
    #[histogram("app.job.duration", unit = "s")]
    duration_s: Option<f64>,
    /// How the job ended; `unknown` when not said.
    #[attribute("app.job.outcome", default = "unknown")]
    outcome: Option<Outcome>,
    /// Whether it was retried.
    #[attribute("app.job.retried", only(finished))]
    retried: Option<bool>,
    /// The worker that ran it.
    #[attribute("app.worker", only(duration_s))]
    worker: Option<String>,
}

#[test]
fn attributes_follow_the_keys_with_their_values_and_defaults() {
    let [finished, duration] = Jobs::DESCRIPTORS else {
        panic!("two descriptors")
    };
    let keys: Vec<&str> = finished.attributes.iter().map(|a| a.key).collect();
    assert_eq!(keys, finished.attribute_keys);
    assert_eq!(
        finished.attributes,
        [
            AttributeDescriptor {
                key: "app.job.outcome",
                values: Some(&["success", "timed_out"]),
                default: Some("unknown"),
            },
            AttributeDescriptor {
                key: "app.job.retried",
                values: Some(&["false", "true"]),
                default: None,
            },
            AttributeDescriptor {
                key: "app.queue",
                values: Some(&["main"]),
                default: Some("main"),
            },
        ]
    );
    assert_eq!(
        finished.attributes[0].wire_values(),
        Some(vec!["success", "timed_out", "unknown"])
    );
    // Three outcomes (with the default) times retried, not, or unset.
    assert_eq!(finished.max_series(), Some(3 * 3));

    assert_eq!(
        duration.attributes[1],
        AttributeDescriptor {
            key: "app.worker",
            values: None,
            default: None,
        }
    );
    assert_eq!(duration.max_series(), None, "the worker is free-form");
}
