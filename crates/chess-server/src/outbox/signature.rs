//! The HMAC-SHA256 signatures of the reward webhook and of the
//! reconciliation API, with `REWARD_WEBHOOK_SECRET` as the key.
//!
//! What is signed:
//!
//! - a reward request (and a reconciliation reply): the raw body, which
//!   carries its own `timestamp` (unix seconds, also sent as
//!   `X-Chess-Timestamp`), so a receiver that checks the signature and then
//!   the timestamp refuses a request replayed later;
//! - a reconciliation request, which has no body: `"{timestamp}\n{METHOD}\n
//!   {path and query}"`, so a signed listing cannot be replayed for another
//!   page or after its freshness window.
//!
//! The header is `X-Chess-Signature: sha256=<lowercase hex>`, compared in
//! constant time.

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;

/// The signature header.
pub const SIGNATURE_HEADER: &str = "x-chess-signature";
/// The timestamp header: unix seconds, also inside every signed body.
pub const TIMESTAMP_HEADER: &str = "x-chess-timestamp";
/// The idempotency key header: the ledger entry's id.
pub const IDEMPOTENCY_HEADER: &str = "idempotency-key";
/// How far a signed reconciliation request's timestamp may be from the
/// server's clock, either way (and what a receiver of a reward request
/// should allow).
pub const FRESHNESS_SECONDS: i64 = 300;

const PREFIX: &str = "sha256=";

fn mac(secret: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    Hmac::<Sha256>::new_from_slice(secret).expect("HMAC accepts keys of every length")
}

/// `sha256=<hex>` of `message` under `secret`.
pub fn sign(secret: &[u8], message: &[u8]) -> String {
    let mut mac = mac(secret);
    mac.update(message);
    let digest = mac.finalize().into_bytes();
    let mut text = String::with_capacity(PREFIX.len() + 64);
    text.push_str(PREFIX);
    for byte in digest {
        use std::fmt::Write as _;
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// Whether `header` is the signature of `message` under `secret`
/// (constant-time in the signature's value).
pub fn verify(secret: &[u8], message: &[u8], header: &str) -> bool {
    let Some(hex) = header.trim().strip_prefix(PREFIX) else {
        return false;
    };
    let Some(bytes) = decode_hex(hex) else {
        return false;
    };
    let mut mac = mac(secret);
    mac.update(message);
    mac.verify_slice(&bytes).is_ok()
}

/// What a reconciliation request signs: its timestamp, method and path
/// with query, one per line.
pub fn request_message(timestamp: i64, method: &str, path_and_query: &str) -> String {
    format!("{timestamp}\n{method}\n{path_and_query}")
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4231, test case 2: the signature is standard HMAC-SHA256, so
    /// any receiver's library checks it.
    #[test]
    fn the_signature_is_standard_hmac_sha256() {
        assert_eq!(
            sign(b"Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_changed_byte_a_changed_key_or_a_malformed_header_does_not_verify() {
        let secret = b"0123456789abcdef0123456789abcdef";
        let signature = sign(secret, b"{\"amount_cents\":100}");
        assert!(verify(secret, b"{\"amount_cents\":100}", &signature));
        assert!(!verify(secret, b"{\"amount_cents\":900}", &signature));
        assert!(!verify(
            b"another secret of 32 bytes or more",
            b"{\"amount_cents\":100}",
            &signature
        ));
        for malformed in [
            "",
            "sha256=",
            "sha1=00",
            &signature[7..],
            &signature[..70],
            "sha256=zz",
        ] {
            assert!(
                !verify(secret, b"{\"amount_cents\":100}", malformed),
                "{malformed}"
            );
        }
    }
}
