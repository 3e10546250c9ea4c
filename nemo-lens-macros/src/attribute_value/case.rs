//! `rename_all`: serde's case conventions, applied to variant names exactly
//! as serde applies them, so an enum shared with serde exports the strings
//! it serializes.

/// A `rename_all` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    /// Every accepted spelling, for messages.
    pub const NAMES: [&'static str; 8] = [
        "lowercase",
        "UPPERCASE",
        "PascalCase",
        "camelCase",
        "snake_case",
        "SCREAMING_SNAKE_CASE",
        "kebab-case",
        "SCREAMING-KEBAB-CASE",
    ];

    const RULES: [RenameRule; 8] = [
        RenameRule::Lower,
        RenameRule::Upper,
        RenameRule::Pascal,
        RenameRule::Camel,
        RenameRule::Snake,
        RenameRule::ScreamingSnake,
        RenameRule::Kebab,
        RenameRule::ScreamingKebab,
    ];

    /// The rule spelled `name`, if it is one of [`NAMES`](Self::NAMES).
    pub fn from_name(name: &str) -> Option<RenameRule> {
        let index = Self::NAMES.iter().position(|n| *n == name)?;
        Some(Self::RULES[index])
    }

    /// `variant` (a Rust variant name, in PascalCase) in this convention.
    pub fn apply(self, variant: &str) -> String {
        match self {
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Snake => {
                // As serde: a word starts at every uppercase letter, so
                // `HTTPError` is `h_t_t_p_error`; rename such a variant.
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            RenameRule::ScreamingSnake => RenameRule::Snake.apply(variant).to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake.apply(variant).replace('_', "-"),
            RenameRule::ScreamingKebab => {
                RenameRule::ScreamingSnake.apply(variant).replace('_', "-")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule;

    #[test]
    fn every_name_is_its_rule() {
        for name in RenameRule::NAMES {
            let rule = RenameRule::from_name(name).unwrap();
            assert_eq!(
                RenameRule::NAMES[RenameRule::RULES.iter().position(|r| *r == rule).unwrap()],
                name
            );
        }
        assert_eq!(RenameRule::from_name("snake"), None);
        assert_eq!(RenameRule::from_name("SnakeCase"), None);
    }

    /// The table of serde's own `rename_variants` test.
    #[test]
    fn spells_variants_as_serde_does() {
        for &(original, lower, upper, camel, snake, screaming, kebab, screaming_kebab) in &[
            (
                "Outcome", "outcome", "OUTCOME", "outcome", "outcome", "OUTCOME", "outcome",
                "OUTCOME",
            ),
            (
                "VeryTasty",
                "verytasty",
                "VERYTASTY",
                "veryTasty",
                "very_tasty",
                "VERY_TASTY",
                "very-tasty",
                "VERY-TASTY",
            ),
            ("A", "a", "A", "a", "a", "A", "a", "A"),
            ("Z42", "z42", "Z42", "z42", "z42", "Z42", "z42", "Z42"),
        ] {
            let apply = |name| RenameRule::from_name(name).unwrap().apply(original);
            assert_eq!(apply("lowercase"), lower);
            assert_eq!(apply("UPPERCASE"), upper);
            assert_eq!(apply("PascalCase"), original);
            assert_eq!(apply("camelCase"), camel);
            assert_eq!(apply("snake_case"), snake);
            assert_eq!(apply("SCREAMING_SNAKE_CASE"), screaming);
            assert_eq!(apply("kebab-case"), kebab);
            assert_eq!(apply("SCREAMING-KEBAB-CASE"), screaming_kebab);
        }
    }
}
