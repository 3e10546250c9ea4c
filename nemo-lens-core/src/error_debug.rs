//! `Debug` of the public errors: the sentence, then each cause.
//!
//! `fn main() -> Result<(), E>` and `.unwrap()` print an error's `Debug`, so
//! a derived one would show users a struct dump instead of the message that
//! names the variable, the value or the file. Every public error type gets
//! this instead; `source()` still hands the causes to error reporters.

use std::error::Error;
use std::fmt;

/// Writes `error`'s `Display`, then `: cause` for each of its sources.
pub fn sentence_and_causes(error: &dyn Error, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "{error}")?;
    let mut cause = error.source();
    while let Some(next) = cause {
        write!(f, ": {next}")?;
        cause = next.source();
    }
    Ok(())
}

/// Implements `Debug` as [`sentence_and_causes`] for each type. Exported
/// (hidden) because every crate of the house defines public errors; the
/// facade does not re-export it.
#[doc(hidden)]
#[macro_export]
macro_rules! __debug_as_sentence {
    ($($error:ty),+ $(,)?) => {$(
        impl ::std::fmt::Debug for $error {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                $crate::__internal::sentence_and_causes(self, f)
            }
        }
    )+};
}
pub(crate) use __debug_as_sentence as debug_as_sentence;

#[cfg(test)]
mod tests {
    use crate::groups::SpecFile;

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
