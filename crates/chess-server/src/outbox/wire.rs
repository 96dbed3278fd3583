//! What a reward request looks like on the wire (`docs/rewards.md`, "Wire
//! format"): the body the webhook receives, and the same request as the
//! reconciliation API lists it, with its delivery.

use serde_json::{Value, json};

use chess_store::RewardRequest;

/// The request's own fields, which never change from one attempt to the
/// next (only the body's `timestamp` does).
fn fields(request: &RewardRequest) -> serde_json::Map<String, Value> {
    let Value::Object(fields) = json!({
        "type": "reward.requested",
        "entry_id": request.entry_id,
        "account_id": request.account_id,
        "platform_subject": request.platform_subject,
        "username": request.username,
        "amount_cents": request.amount_cents,
        "currency": request.currency,
        "game_id": request.game_id,
        "result": { "winner": request.winner, "reason": request.reason },
        "day": request.day,
        "created_at_ms": request.created_at_ms,
    }) else {
        unreachable!("json! of an object is an object")
    };
    fields
}

/// The body POSTed to the webhook, signed as it is: the request's fields and
/// `timestamp`, the unix seconds it was sent at (also `X-Chess-Timestamp`).
pub fn request_body(request: &RewardRequest, timestamp: i64) -> Vec<u8> {
    let mut body = fields(request);
    body.insert("timestamp".to_owned(), json!(timestamp));
    serde_json::to_vec(&Value::Object(body)).expect("a JSON value serializes")
}

/// The request as the reconciliation API lists it: its fields and its
/// delivery.
pub fn listed(request: &RewardRequest) -> Value {
    let mut listed = fields(request);
    listed.insert(
        "delivery".to_owned(),
        json!({
            "state": request.state.code(),
            "attempts": request.attempts,
            "last_status": request.last_status,
            "last_error": request.last_error,
            "finished_at_ms": request.finished_at_ms,
        }),
    );
    Value::Object(listed)
}
