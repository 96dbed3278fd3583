//! Account usernames: a parsed type, so no raw string reaches the store.
//!
//! Rules: 3 to 20 characters, ASCII letters, digits, `_` and `-`, starting
//! with a letter or a digit. Uniqueness is case-insensitive: `Magnus` and
//! `magnus` are the same account, so the store keeps a normalised
//! [`Username::key`] under a unique index while showing the name as typed.
//! ASCII only on purpose: it rules out look-alike names built from other
//! scripts (a Cyrillic `а` in place of a Latin `a`) without a confusables table.

use std::fmt;

/// The fewest characters a username may have.
pub const MIN_USERNAME_LEN: usize = 3;
/// The most characters a username may have.
pub const MAX_USERNAME_LEN: usize = 20;

/// A valid username, as the person typed it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Username(String);

/// Why a string is not a username.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UsernameError {
    /// Fewer than [`MIN_USERNAME_LEN`] characters.
    #[error("a username needs at least {MIN_USERNAME_LEN} characters, this one has {0}")]
    TooShort(usize),
    /// More than [`MAX_USERNAME_LEN`] characters.
    #[error("a username has at most {MAX_USERNAME_LEN} characters, this one has {0}")]
    TooLong(usize),
    /// A character outside ASCII letters, digits, `_` and `-`.
    #[error("a username may only contain letters a-z, digits, '_' and '-', not {0:?}")]
    BadCharacter(char),
    /// The first character is `_` or `-`.
    #[error("a username must start with a letter or a digit")]
    BadStart,
}

impl Username {
    /// Parses a username.
    ///
    /// # Errors
    /// A [`UsernameError`] naming the first rule `raw` breaks. Surrounding
    /// whitespace is not trimmed: a name with a space is refused, not changed.
    pub fn parse(raw: &str) -> Result<Username, UsernameError> {
        let len = raw.chars().count();
        if len < MIN_USERNAME_LEN {
            return Err(UsernameError::TooShort(len));
        }
        if len > MAX_USERNAME_LEN {
            return Err(UsernameError::TooLong(len));
        }
        if let Some(bad) = raw
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        {
            return Err(UsernameError::BadCharacter(bad));
        }
        if raw.starts_with(['_', '-']) {
            return Err(UsernameError::BadStart);
        }
        Ok(Username(raw.to_owned()))
    }

    /// The name as typed, for display.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The normalised form two names share exactly when they are the same
    /// account: lowercase. The store's unique index is on this key.
    pub fn key(&self) -> String {
        self.0.to_ascii_lowercase()
    }
}

impl fmt::Display for Username {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for Username {
    type Err = UsernameError;

    fn from_str(raw: &str) -> Result<Username, UsernameError> {
        Username::parse(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_names_within_the_rules() {
        for raw in [
            "abc",
            "Magnus_Carlsen",
            "a-b_c",
            "123",
            "x".repeat(20).as_str(),
        ] {
            let name = Username::parse(raw).unwrap_or_else(|e| panic!("{raw:?}: {e}"));
            assert_eq!(name.as_str(), raw);
        }
    }

    #[test]
    fn refuses_each_broken_rule_with_its_own_error() {
        let cases: &[(&str, UsernameError)] = &[
            ("", UsernameError::TooShort(0)),
            ("ab", UsernameError::TooShort(2)),
            ("abcdefghijklmnopqrstu", UsernameError::TooLong(21)),
            ("has space", UsernameError::BadCharacter(' ')),
            (" abc", UsernameError::BadCharacter(' ')),
            ("bob@home", UsernameError::BadCharacter('@')),
            ("pаvel", UsernameError::BadCharacter('а')), // Cyrillic a
            ("élan", UsernameError::BadCharacter('é')),
            ("_abc", UsernameError::BadStart),
            ("-abc", UsernameError::BadStart),
        ];
        for (raw, expected) in cases {
            assert_eq!(Username::parse(raw).as_ref(), Err(expected), "{raw:?}");
        }
    }

    #[test]
    fn length_counts_characters_not_bytes() {
        // Three two-byte characters are three characters: too short, not a
        // bad character found after a miscount.
        assert_eq!(Username::parse("éé"), Err(UsernameError::TooShort(2)));
        let long = "é".repeat(21);
        assert_eq!(Username::parse(&long), Err(UsernameError::TooLong(21)));
    }

    #[test]
    fn names_differing_only_in_case_share_a_key() {
        let a = Username::parse("Magnus").unwrap();
        let b = Username::parse("mAGNUS").unwrap();
        assert_eq!(a.key(), b.key());
        assert_ne!(a.as_str(), b.as_str());
        assert_ne!(a.key(), Username::parse("Magnus2").unwrap().key());
    }

    #[test]
    fn errors_read_as_sentences() {
        assert_eq!(
            UsernameError::BadCharacter('@').to_string(),
            "a username may only contain letters a-z, digits, '_' and '-', not '@'"
        );
    }
}
