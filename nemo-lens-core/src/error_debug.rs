//! `Debug` of the public errors: the sentence, then each cause.
//!
//! `fn main() -> Result<(), E>` and `.unwrap()` print an error's `Debug`, so
//! a derived one would show users a struct dump instead of the message that
//! names the variable, the value or the file. Every public error type gets
//! this instead; `source()` still hands the causes to error reporters.

use std::error::Error;
use std::fmt;

/// Writes `error`'s `Display`, then `: cause` for each of its sources.
pub(crate) fn sentence_and_causes(error: &dyn Error, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "{error}")?;
    let mut cause = error.source();
    while let Some(next) = cause {
        write!(f, ": {next}")?;
        cause = next.source();
    }
    Ok(())
}

/// Implements `Debug` as [`sentence_and_causes`] for each type.
macro_rules! debug_as_sentence {
    ($($error:ty),+ $(,)?) => {$(
        impl ::std::fmt::Debug for $error {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                $crate::error_debug::sentence_and_causes(self, f)
            }
        }
    )+};
}
pub(crate) use debug_as_sentence;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::groups::SpecFile;
    use crate::telemetry::{EnvLookup, NemoLensConfig, ShutdownError};

    #[test]
    fn debug_is_the_sentence_for_main_to_print() {
        let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([(
            "NEMO_LENS_EXPORTER",
            "prometeus",
        )]))
        .unwrap_err();
        assert_eq!(format!("{config:?}"), config.to_string());
        assert!(
            format!("{config:?}").contains("NEMO_LENS_EXPORTER")
                && format!("{config:?}").contains("prometeus"),
            "{config:?}"
        );

        let shutdown = ShutdownError::Timeout(Duration::from_secs(5));
        assert_eq!(
            format!("{shutdown:?}"),
            "telemetry shutdown did not finish within 5s"
        );
    }

    #[test]
    fn debug_adds_each_cause_after_the_sentence() {
        let missing = SpecFile::load("/nonexistent/nemo-lens/spec.json").unwrap_err();
        let debug = format!("{missing:?}");
        let cause = std::error::Error::source(&missing).unwrap().to_string();
        assert_eq!(debug, format!("{missing}: {cause}"));
        assert!(
            debug.contains("/nonexistent/nemo-lens/spec.json"),
            "{debug}"
        );
    }
}
