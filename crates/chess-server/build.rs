//! Two jobs before the server compiles:
//!
//! 1. **Rebuild when the web client changes.** The client in `web/` is built
//!    into the binary (`src/http/web.rs`); cargo notices edits to the files
//!    already embedded, but not a file added to a folder, so every part of the
//!    client is watched here. Development-only folders (browser tests, npm
//!    packages, screenshots) are not embedded, and changes there must not
//!    cause a rebuild.
//! 2. **Build the browser's rules and engine.** `chess-wasm` is compiled for
//!    `wasm32-unknown-unknown` by a cargo of its own (its own target folder,
//!    `<target>/wasm`, so it never waits on the build that runs this script),
//!    then wasm-bindgen (the library of its command-line tool, the same version
//!    `chess-wasm` pins) writes the JavaScript glue. The server serves both
//!    under `/wasm/` (`src/http/web.rs`), and a copy in `<target>/wasm/pkg`
//!    is what the web client's unit tests load. So `cargo run` needs no extra step;
//!    on a machine without the target, rustup adds it first.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The entries of `web/` that are not part of the client (kept in step with
/// the `exclude` list in `src/http/web.rs`).
const NOT_EMBEDDED: &[&str] = &["node_modules", "e2e", "test", "screenshots"];

const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// The crates compiled into the WebAssembly module: a change in any of them
/// builds it again.
const WASM_CRATES: &[&str] = &["chess-wasm", "chess-rules", "chess-game", "chess-engine"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned()));
    let workspace = manifest.join("../..");
    watch_web_client(&workspace.join("web"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    build_wasm(&workspace, &out);
}

fn watch_web_client(web: &Path) {
    let Ok(entries) = std::fs::read_dir(web) else {
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

fn build_wasm(workspace: &Path, out: &Path) {
    for name in WASM_CRATES {
        let dir = workspace.join("crates").join(name);
        println!("cargo:rerun-if-changed={}", dir.join("src").display());
        println!(
            "cargo:rerun-if-changed={}",
            dir.join("Cargo.toml").display()
        );
    }
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.lock").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.toml").display()
    );

    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    ensure_target(&rustc);

    let target_dir = target_root(out).join("wasm");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = Command::new(cargo);
    build
        .args([
            "build",
            "--package",
            "chess-wasm",
            "--lib",
            "--target",
            WASM_TARGET,
            "--profile",
            "web",
        ])
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's flags and wrappers are for the server (clippy's
    // driver during `cargo clippy`, coverage flags, a host target): the
    // module is built the same way whatever ran this script. The test
    // command lints chess-wasm for wasm32 on its own.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
    ] {
        build.env_remove(var);
    }
    let status = build
        .status()
        .unwrap_or_else(|err| panic!("could not run cargo for the WebAssembly module: {err}"));
    assert!(
        status.success(),
        "building chess-wasm for {WASM_TARGET} failed (see above)"
    );

    let module = target_dir
        .join(WASM_TARGET)
        .join("web")
        .join("chess_wasm.wasm");
    let glue = out.join("wasm");
    std::fs::create_dir_all(&glue).expect("OUT_DIR is writable");
    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(&module)
        .web(true)
        .expect("wasm-bindgen's web output")
        .typescript(false)
        .generate(&glue)
        .unwrap_or_else(|err| panic!("wasm-bindgen could not bind {}: {err:#}", module.display()));

    // A copy where the web client's unit tests and benchmarks find it
    // (`web/run-tests.sh` passes `<target>/wasm/pkg` as CHESS_WASM_DIR).
    let pkg = target_dir.join("pkg");
    std::fs::create_dir_all(&pkg).expect("the target folder is writable");
    for name in ["chess_wasm.js", "chess_wasm_bg.wasm"] {
        let staged = pkg.join(format!(".{name}.new"));
        std::fs::copy(glue.join(name), &staged).expect("copy the module");
        std::fs::rename(&staged, pkg.join(name)).expect("move the module in place");
    }
}

/// Adds the WebAssembly target to this toolchain when it lacks it: rustup
/// does not add targets to an installed toolchain by itself.
fn ensure_target(rustc: &str) {
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    let installed = sysroot.is_some_and(|root| root.join("lib/rustlib").join(WASM_TARGET).exists());
    if installed {
        return;
    }
    let added = Command::new("rustup")
        .args(["target", "add", WASM_TARGET])
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        added,
        "the {WASM_TARGET} target is missing and `rustup target add {WASM_TARGET}` failed: \
         install it (with rustup, or your distribution's rust-std for {WASM_TARGET}) and build again"
    );
}

/// The build's target folder: the nearest folder above `OUT_DIR` that cargo
/// tagged as its own (`CACHEDIR.TAG`), else `OUT_DIR` itself.
fn target_root(out: &Path) -> PathBuf {
    out.ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").exists())
        .unwrap_or(out)
        .to_path_buf()
}
