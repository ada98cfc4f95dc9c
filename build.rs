//! Embeds the model catalogue: every `src/import/catalogue/*.json` (a Hub `config.json`
//! plus a `_headroom` block) becomes an entry of `CATALOGUE_FILES`, so adding a model is
//! adding a file.

use std::{env, fs, path::Path};

fn main() {
    let dir = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("manifest dir")).join("src/import/catalogue");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = fs::read_dir(&dir)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    files.sort();
    let mut out = String::from("/// Catalogue files (stem, content), sorted by file name.\npub const CATALOGUE_FILES: &[(&str, &str)] = &[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 file name");
        out.push_str(&format!("    ({stem:?}, include_str!({:?})),\n", path.display().to_string()));
    }
    out.push_str("];\n");
    fs::write(Path::new(&env::var("OUT_DIR").expect("out dir")).join("catalogue.rs"), out).expect("write catalogue.rs");
}
