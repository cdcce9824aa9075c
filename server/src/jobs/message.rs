//! What every kind's message shares: the readers of its fields (a wrong field
//! named by its path, `null` as a default, text read as the command line reads
//! it) and [`MessageError`], why a message from the page is refused.

use serde::Deserialize;

/// An example of a good message, quoted in errors that know no kind yet.
pub(crate) const EXAMPLE: &str = r#"{"type":"run","step":"write-read","params":{"bytes":"1GiB"}}"#;

/// Why a message from the page was refused; its text is the sentence the page
/// shows (the `error` event's `message`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum MessageError {
    /// Not JSON at all.
    #[error("not valid JSON ({reason}); send e.g. {EXAMPLE}")]
    NotJson {
        /// The JSON parser's words.
        reason: String,
    },
    /// JSON, but not an object.
    #[error("expected a JSON object such as {EXAMPLE}")]
    NotAnObject,
    /// No `type`, or one that is not a string.
    #[error("missing `type` (a string); send e.g. {EXAMPLE} or {{\"type\":\"cancel\"}}")]
    NoType,
    /// A `type` the server does not take.
    #[error("unknown message type `{kind}`: expected one of {known:?}")]
    UnknownType {
        /// The type given.
        kind: String,
        /// Every type the server takes.
        known: &'static [&'static str],
    },
    /// A message of a known type with a field missing, unknown or of the wrong
    /// shape (`reason` names it, in serde's words).
    #[error("bad {kind} message: {reason}; send e.g. {example}")]
    Invalid {
        /// The message's type.
        kind: &'static str,
        /// What is wrong, naming the field.
        reason: String,
        /// A good message of that type.
        example: &'static str,
    },
    /// A number outside the server's bounds, found while reading the message.
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
}

/// A field of a message with a value outside the server's bounds, in the
/// page's own field names.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field} = {value} is out of range: allowed {bounds}")]
pub(crate) struct OutOfRange {
    /// The message's field.
    pub(crate) field: &'static str,
    /// The value given.
    pub(crate) value: String,
    /// What is allowed.
    pub(crate) bounds: String,
}

/// A message's fields, read with the path of a field that is wrong: its error
/// names the field (`params.bytes`), which serde's own words for a wrong type
/// do not.
#[derive(Debug)]
pub(crate) struct Located<T>(pub(crate) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde_path_to_error::deserialize(deserializer)
            .map(Located)
            .map_err(|err| {
                let path = err.path().to_string();
                let inner = err.into_inner();
                if path == "." {
                    inner
                } else {
                    serde::de::Error::custom(format!("`{path}`: {inner}"))
                }
            })
    }
}

/// A field that may be left out or sent as `null`: either is its default.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A field read from its text the way the command line reads it (`FromStr`).
pub(crate) fn from_str<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    String::deserialize(deserializer)?
        .parse()
        .map_err(serde::de::Error::custom)
}
