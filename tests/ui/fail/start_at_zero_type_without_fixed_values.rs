use nemo_lens::{AttributeValue, Instruments, KeyPart};
use nemo_lens::opentelemetry::Value;

/// A type of the user's with any value.
#[derive(Clone, Copy)]
struct Shard(u32);

impl AttributeValue for Shard {
    fn key_part(&self) -> Option<KeyPart<'_>> {
        Some(KeyPart::I64(i64::from(self.0)))
    }
    fn to_value(&self) -> Option<Value> {
        Some(Value::I64(i64::from(self.0)))
    }
}

#[derive(Instruments)]
struct Rollouts {
    /// Rollouts finished.
    #[counter("app.rollout.finished", unit = "{rollout}", start_at_zero)]
    finished: Option<u64>,
    /// The shard.
    #[attribute("app.shard")]
    shard: Option<Shard>,
}

fn main() {}
