//! Checks of command-line numbers that the tools share.

/// A flag's number outside the range the tool accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("--{flag} must be between {min} and {max}, got {value}")]
pub struct OutOfRange {
    pub flag: &'static str,
    pub min: u64,
    pub max: u64,
    pub value: u64,
}

/// `value` of `--flag` as a `T` when `min <= value <= max`.
///
/// # Errors
/// [`OutOfRange`] otherwise (or when it does not fit a `T`).
pub fn in_range<T: TryFrom<u64>>(
    flag: &'static str,
    value: u64,
    min: u64,
    max: u64,
) -> Result<T, OutOfRange> {
    let out_of_range = OutOfRange {
        flag,
        min,
        max,
        value,
    };
    if !(min..=max).contains(&value) {
        return Err(out_of_range);
    }
    T::try_from(value).map_err(|_| out_of_range)
}
