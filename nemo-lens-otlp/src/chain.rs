//! An error and its causes as one line, each cause said once.

/// `error` and its sources, `: `-separated, leaving out a cause whose text
/// the line already holds: transports wrap an error in a layer that repeats
/// its message (tonic's `tcp connect error: tcp connect error: ...`).
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    causes_into(&mut text, error.source());
    text
}

/// Appends each of `source` and its sources to `text`, as [`chain`] does.
pub(crate) fn causes_into(
    text: &mut String,
    mut source: Option<&(dyn std::error::Error + 'static)>,
) {
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !cause_text.is_empty() && !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1
                .as_deref()
                .map(|l| l as &(dyn std::error::Error + 'static))
        }
    }

    #[test]
    fn a_cause_that_repeats_a_message_is_said_once() {
        // As tonic's transport error wraps hyper's connector error.
        let error = Layer(
            "transport error",
            Some(Box::new(Layer(
                "tcp connect error",
                Some(Box::new(Layer(
                    "tcp connect error",
                    Some(Box::new(Layer("Connection refused (os error 111)", None))),
                ))),
            ))),
        );
        assert_eq!(
            chain(&error),
            "transport error: tcp connect error: Connection refused (os error 111)"
        );
    }
}
