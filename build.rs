//! Embeds the model catalogue: every `src/import/catalogue/*.json` (a Hub `config.json`
//! plus a `_headroom` block) becomes an entry of `CATALOGUE_FILES`, so adding a model is
//! adding a file. Each file is re-serialised without whitespace (a smaller page); a file
//! that is not JSON stops the build with its name.

use std::{env, fs, path::Path};

fn main() {
    let dir = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("manifest dir")).join("src/import/catalogue");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = fs::read_dir(&dir)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    files.sort();
    let out_dir = Path::new(&env::var("OUT_DIR").expect("out dir")).join("catalogue");
    fs::create_dir_all(&out_dir).expect("create OUT_DIR/catalogue");
    let mut out = String::from("/// Catalogue files (stem, compact JSON), sorted by file name.\npub const CATALOGUE_FILES: &[(&str, &str)] = &[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 file name");
        let text = fs::read_to_string(path).expect("read catalogue file");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let compact = out_dir.join(format!("{stem}.json"));
        fs::write(&compact, value.to_string()).expect("write compact catalogue file");
        out.push_str(&format!("    ({stem:?}, include_str!({:?})),\n", compact.display().to_string()));
    }
    out.push_str("];\n");
    fs::write(out_dir.with_file_name("catalogue.rs"), out).expect("write catalogue.rs");
}
