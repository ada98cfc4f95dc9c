//! Embeds the model catalogue: every `src/import/catalogue/*.json` (a Hub `config.json`
//! plus a `_headroom` block) becomes an entry of `CATALOGUE`, so adding a model is adding a
//! file. The `_headroom` block's names (Hub id, display name, aliases) become fields of the
//! entry, so looking a model up by name parses nothing; the config itself is re-serialised
//! without whitespace (a smaller page) and parsed only when that model is used. A file that
//! is not JSON stops the build with its name.

use std::{env, fs, path::Path};

use serde_json::Value;

fn main() {
    let dir = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("manifest dir")).join("src/import/catalogue");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> =
        fs::read_dir(&dir).map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect()).unwrap_or_default();
    files.sort();
    let out_dir = Path::new(&env::var("OUT_DIR").expect("out dir")).join("catalogue");
    fs::create_dir_all(&out_dir).expect("create OUT_DIR/catalogue");
    let mut out = String::from("/// The catalogue, sorted by file name.\npub const CATALOGUE: &[CatalogueEntry] = &[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 file name");
        let text = fs::read_to_string(path).expect("read catalogue file");
        let mut config: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let meta = config.as_object_mut().and_then(|o| o.remove("_headroom")).unwrap_or(Value::Null);
        // A multimodal wrapper listed for its text model only (`text_only`): without its
        // `vision_config` the importer builds the text model alone, as its `hf_class` does.
        if meta.get("text_only").and_then(Value::as_bool) == Some(true) {
            if let Some(o) = config.as_object_mut() {
                o.remove("vision_config");
            }
        }
        let field = |k: &str| meta.get(k).and_then(Value::as_str).map(str::to_string);
        let id = field("id").unwrap_or_else(|| stem.replace("--", "/"));
        let name = field("name").unwrap_or_else(|| id.clone());
        let aliases: Vec<&str> = meta.get("aliases").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let compact = out_dir.join(format!("{stem}.json"));
        fs::write(&compact, config.to_string()).expect("write compact catalogue file");
        out.push_str(&format!("    CatalogueEntry {{ id: {id:?}, name: {name:?}, aliases: &{aliases:?}, config: include_str!({:?}) }},\n", compact.display().to_string()));
    }
    out.push_str("];\n");
    fs::write(out_dir.with_file_name("catalogue.rs"), out).expect("write catalogue.rs");
}
