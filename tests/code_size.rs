//! Small files, short functions: no file in `src/` over 800 lines and no function over 100
//! lines unless it says why (`//! long: why` in the file, `// long: why` among the comments
//! and attributes just above the function).

use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 100;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The name of the function a line opens (`fn name`, after any `pub`, `const`, `async`, …),
/// unless it is a declaration without a body.
fn opens_fn(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if rest.starts_with("//") || rest.trim_end().ends_with(';') {
        return None;
    }
    loop {
        if let Some(scoped) = ["pub(crate)", "pub(super)", "pub(self)"].iter().find_map(|p| rest.strip_prefix(p)) {
            rest = scoped.trim_start();
            continue;
        }
        let word = rest.split(|c: char| c.is_whitespace() || c == '(').next()?;
        match word {
            "pub" | "const" | "async" | "unsafe" | "extern" => rest = rest[word.len()..].trim_start(),
            "fn" => return rest[2..].trim_start().split(|c: char| !(c.is_alphanumeric() || c == '_')).next(),
            _ => return None,
        }
    }
}

/// `(name, lines)` of every function in `lines`: from its `fn` line to the closing brace at
/// its own indentation; `marked` when a `// long:` comment sits above it.
fn functions(lines: &[&str]) -> Vec<(String, usize, usize, bool)> {
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = opens_fn(line) else { continue };
        let indent = &line[..line.len() - line.trim_start().len()];
        let Some(end) = lines[i + 1..].iter().position(|l| *l == format!("{indent}}}")) else { continue };
        let mut marked = false;
        for above in lines[..i].iter().rev() {
            let t = above.trim_start();
            if t.starts_with("// long:") {
                marked = true;
            }
            if !(t.starts_with("//") || t.starts_with("#[")) {
                break;
            }
        }
        found.push((name.to_string(), i + 1, end + 2, marked));
    }
    found
}

#[test]
fn files_and_functions_are_short_or_say_why() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    assert!(all.len() > 100);
    let mut problems = Vec::new();
    for path in &all {
        let text = std::fs::read_to_string(path).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        let shown = path.strip_prefix(&src).unwrap_or(path).display().to_string();
        if lines.len() > MAX_FILE_LINES && !lines.iter().any(|l| l.starts_with("//! long:")) {
            problems.push(format!("src/{shown}: {} lines, and no `//! long: why`", lines.len()));
        }
        for (name, at, length, marked) in functions(&lines) {
            if length > MAX_FN_LINES && !marked {
                problems.push(format!("src/{shown}:{at} fn {name}: {length} lines, and no `// long: why` above it"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reader_measures_functions() {
    let text = "/// doc\n// long: a table\npub(crate) fn a() {\n    x\n}\nfn b(x: u8) -> u8 {\n    fn inner() {\n    }\n    x\n}\nfn decl();\n";
    let lines: Vec<&str> = text.lines().collect();
    let found = functions(&lines);
    assert_eq!(found, vec![("a".into(), 3, 3, true), ("b".into(), 6, 5, false), ("inner".into(), 7, 2, false)]);
}
