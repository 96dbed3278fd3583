//! The fields of an API request's body, as lichess's clients send them: a
//! form (`application/x-www-form-urlencoded`) or a JSON object, read into
//! one map of texts, and the typed readers every route shares.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use serde_json::Value;

use super::reply::ApiFailure;

/// A body's fields by name.
pub type Fields = HashMap<String, String>;

/// The fields of a form (or JSON object) body.
pub fn fields(headers: &HeaderMap, body: &Bytes) -> Result<Fields, ApiFailure> {
    let json = headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if json {
        let object: serde_json::Map<String, Value> = serde_json::from_slice(body)
            .map_err(|error| ApiFailure::bad_request(format!("Invalid JSON body: {error}")))?;
        // Clients send unset fields as null (berserk does): absent.
        return Ok(object
            .into_iter()
            .filter_map(|(key, value)| match value {
                Value::Null => None,
                Value::String(text) => Some((key, text)),
                other => Some((key, other.to_string())),
            })
            .collect());
    }
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(body)
        .map_err(|error| ApiFailure::bad_request(format!("Invalid form body: {error}")))?;
    Ok(pairs.into_iter().collect())
}

/// The non-negative number in field `name`, if given.
pub fn number(fields: &Fields, name: &str) -> Result<Option<f64>, ApiFailure> {
    fields
        .get(name)
        .filter(|text| !text.is_empty())
        .map(|text| {
            text.parse::<f64>()
                .ok()
                .filter(|value| value.is_finite() && *value >= 0.0)
                .ok_or_else(|| {
                    ApiFailure::bad_request(format!("{name}: expected a number, not {text:?}"))
                })
        })
        .transpose()
}

/// The boolean in field `name` (`true` or `false`, any letter case), if
/// given.
///
/// # Errors
/// `400` naming the field when it holds anything else.
pub fn flag(fields: &Fields, name: &str) -> Result<Option<bool>, ApiFailure> {
    match fields.get(name).map(String::as_str) {
        None | Some("") => Ok(None),
        Some(text) if text.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(text) if text.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(text) => Err(ApiFailure::bad_request(format!(
            "{name}: expected true or false, not {text:?}"
        ))),
    }
}

/// Whether a game request asks to be rated (`rated=true`). It is rated
/// only between two accounts that are not bots: with a bot it is casual.
pub fn asks_rated(fields: &Fields) -> bool {
    fields
        .get("rated")
        .is_some_and(|rated| rated.eq_ignore_ascii_case("true"))
}
