//! The web client's pages, scripts and styles: built into the binary from
//! `web/` at compile time, so a copied binary needs no folder beside it; or,
//! with `--web-dir`, read from a folder on every request (for working on the
//! client without rebuilding the server).
//!
//! Files are served at their path under `web/`, `/` is `index.html`, every
//! game page `/game/<id>` and every game of this browser `/local/<id>` is
//! `game.html`, and the WebAssembly rules and engine (built by `build.rs`,
//! never in `web/`) are under `/wasm/`.

use std::borrow::Cow;
use std::path::Path;
use std::sync::OnceLock;

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rust_embed::RustEmbed;
use sha2::{Digest, Sha256};
use tower_http::services::{ServeDir, ServeFile};

/// `web/` as it was at build time, less what only development needs: the
/// browser and unit tests, npm's packages and manifests, screenshots (kept in
/// step with `build.rs`).
#[derive(RustEmbed)]
#[folder = "../../web"]
#[exclude = "node_modules/**"]
#[exclude = "e2e/**"]
#[exclude = "test/**"]
#[exclude = "screenshots/**"]
#[exclude = "*.test.js"]
#[exclude = "package.json"]
#[exclude = "package-lock.json"]
#[exclude = "*.sh"]
#[exclude = "*.md"]
#[exclude = ".*"]
struct Embedded;

/// The script names are not versioned, so a browser may keep a copy but must
/// ask whether it is still current (a cheap `304` when it is): after an
/// upgrade, pages and scripts never mix versions.
const REVALIDATE: &str = "no-cache";

/// The client's routes: the game pages, the WebAssembly module, and every
/// file as the fallback.
pub fn routes<S: Clone + Send + Sync + 'static>(web_dir: Option<&Path>) -> Router<S> {
    let router = Router::new()
        .route("/wasm/chess_wasm.js", get(wasm_glue))
        .route("/wasm/chess_wasm_bg.wasm", get(wasm_module));
    match web_dir {
        Some(folder) => router
            .route_service("/game/{id}", ServeFile::new(folder.join("game.html")))
            .route_service("/local/{id}", ServeFile::new(folder.join("game.html")))
            .fallback_service(ServeDir::new(folder)),
        None => router
            .route("/game/{id}", get(game_page))
            .route("/local/{id}", get(game_page))
            .fallback(embedded_file),
    }
}

/// The JavaScript glue wasm-bindgen wrote for `chess-wasm`.
static WASM_GLUE: Built = Built::new(include_bytes!(concat!(
    env!("OUT_DIR"),
    "/wasm/chess_wasm.js"
)));
/// `chess-wasm` compiled for the browser.
static WASM_MODULE: Built = Built::new(include_bytes!(concat!(
    env!("OUT_DIR"),
    "/wasm/chess_wasm_bg.wasm"
)));

async fn wasm_glue(headers: HeaderMap) -> Response {
    WASM_GLUE.serve("text/javascript", &headers)
}

async fn wasm_module(headers: HeaderMap) -> Response {
    WASM_MODULE.serve("application/wasm", &headers)
}

/// A file the build made, with its entity tag computed on first use.
struct Built {
    data: &'static [u8],
    etag: OnceLock<String>,
}

impl Built {
    const fn new(data: &'static [u8]) -> Built {
        Built {
            data,
            etag: OnceLock::new(),
        }
    }

    fn serve(&'static self, mime: &str, request: &HeaderMap) -> Response {
        let etag = self
            .etag
            .get_or_init(|| entity_tag(&Sha256::digest(self.data)));
        respond(Cow::Borrowed(self.data), etag, mime, request)
    }
}

async fn game_page(headers: HeaderMap) -> Response {
    serve("game.html", &headers)
}

/// The page `name` (a file of the client, such as `player.html`) for a
/// route that decides which page to send: from `web_dir` when set, else the
/// built-in copy.
pub async fn page(web_dir: Option<&Path>, name: &str, headers: &HeaderMap) -> Response {
    match web_dir {
        Some(folder) => match tokio::fs::read(folder.join(name)).await {
            Ok(body) => (
                [
                    (
                        CONTENT_TYPE,
                        HeaderValue::from_static("text/html; charset=utf-8"),
                    ),
                    (CACHE_CONTROL, HeaderValue::from_static(REVALIDATE)),
                ],
                body,
            )
                .into_response(),
            Err(_) => StatusCode::NOT_FOUND.into_response(),
        },
        None => serve(name, headers),
    }
}

async fn embedded_file(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let path = uri.path().trim_start_matches('/');
    if path.is_empty() || path.ends_with('/') {
        return serve(&format!("{path}index.html"), &headers);
    }
    serve(path, &headers)
}

/// The embedded file at `path`, `304` when the browser's copy (by
/// `If-None-Match`) is current, or `404`.
fn serve(path: &str, request: &HeaderMap) -> Response {
    let Some(file) = Embedded::get(path) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let etag = entity_tag(&file.metadata.sha256_hash());
    respond(file.data, &etag, file.metadata.mimetype(), request)
}

/// The entity tag of a file by its SHA-256: its first 16 bytes in hex.
fn entity_tag(hash: &[u8]) -> String {
    let hex: String = hash
        .iter()
        .take(16)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("\"{hex}\"")
}

/// `data` of type `mime` tagged `etag`, or `304` when the browser's copy
/// (by `If-None-Match`) is current.
fn respond(data: Cow<'static, [u8]>, etag: &str, mime: &str, request: &HeaderMap) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(REVALIDATE));
    if let Ok(value) = HeaderValue::from_str(etag) {
        headers.insert(ETAG, value);
    }
    if matches_etag(request, etag) {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    if let Ok(value) = HeaderValue::from_str(&content_type(mime)) {
        headers.insert(CONTENT_TYPE, value);
    }
    (headers, data).into_response()
}

/// Text types say they are UTF-8, so no browser guesses an encoding.
fn content_type(mime: &str) -> String {
    if mime.starts_with("text/") || mime.ends_with("javascript") || mime.ends_with("json") {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_owned()
    }
}

/// Whether `If-None-Match` names `etag` (weak or strong) or is `*`.
fn matches_etag(request: &HeaderMap, etag: &str) -> bool {
    request
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == etag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_is_built_in_without_its_development_files() {
        let names: Vec<String> = Embedded::iter().map(|name| name.into_owned()).collect();
        for needed in ["index.html", "game.html", "js/game.js", "css/style.css"] {
            assert!(
                names.iter().any(|name| name == needed),
                "{needed}: {names:?}"
            );
        }
        for name in &names {
            let development = ["node_modules/", "e2e/", "test/", "screenshots/"]
                .iter()
                .any(|folder| name.starts_with(folder))
                || name.ends_with(".md")
                || name.starts_with("package");
            assert!(!development, "{name} is built in");
        }
    }

    #[test]
    fn text_types_say_utf_8() {
        assert_eq!(content_type("text/html"), "text/html; charset=utf-8");
        assert_eq!(
            content_type("text/javascript"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("image/png"), "image/png");
    }

    #[test]
    fn if_none_match_accepts_weak_tags_and_lists() {
        let mut headers = HeaderMap::new();
        headers.insert(IF_NONE_MATCH, HeaderValue::from_static("\"a\", W/\"b\""));
        assert!(matches_etag(&headers, "\"b\""));
        assert!(!matches_etag(&headers, "\"c\""));
        assert!(!matches_etag(&HeaderMap::new(), "\"b\""));
    }
}
