//! Rebuilds the server when the web client changes (the store's own build
//! script watches the migrations). The client in `web/` is built into the
//! binary (`src/http/web.rs`); cargo notices edits to the files
//! already embedded, but not a file added to a folder, so every part of the
//! client is watched here. Development-only folders (browser tests, npm
//! packages, screenshots) are not embedded, and changes there must not cause
//! a rebuild.

use std::path::Path;

/// The entries of `web/` that are not part of the client (kept in step with
/// the `exclude` list in `src/http/web.rs`).
const NOT_EMBEDDED: &[&str] = &["node_modules", "e2e", "test", "screenshots"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
    let web = Path::new(&manifest).join("../../web");
    let Ok(entries) = std::fs::read_dir(&web) else {
        println!("cargo:rerun-if-changed={}", web.display());
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if NOT_EMBEDDED.iter().any(|skipped| name == *skipped) {
            continue;
        }
        println!("cargo:rerun-if-changed={}", entry.path().display());
    }
}
