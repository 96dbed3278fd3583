//! Rebuilds the store when a migration is added: the migrations are built
//! into the binary, and cargo notices edits to the files already embedded but
//! not a file added to the folder, so the folder is watched whole.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
    println!(
        "cargo:rerun-if-changed={}",
        std::path::Path::new(&manifest)
            .join("../../migrations")
            .display()
    );
}
