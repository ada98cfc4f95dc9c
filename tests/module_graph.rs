//! No import cycles in `src/`: the module dependency graph, read from the source, has no
//! cycle, parent and child modules included.
//!
//! A module depends on another when its code names it: `use crate::…`, `use super::…`,
//! `use self::…` or a relative `use child::…`, and `crate::`/`super::`/`self::` or child
//! paths in code. A path stands for the longest module prefix it names (`crate::model::arch::X`
//! is `model::arch`). Declaring a child (`mod child;`) is not a dependency; re-exporting its
//! items (`pub use child::X`) is, so a child that imports what its parent re-exports from a
//! sibling is in a cycle with its parent: children import the sibling. `#[cfg(test)] mod
//! tests` blocks at the end of a file are left out (they import their parent by design).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `src/a/b.rs` and `src/a/b/mod.rs` → `a::b`; `src/lib.rs` → `` (the crate root).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    match parts.last().map(String::as_str) {
        Some("lib") if parts.len() == 1 => parts.clear(),
        Some("main") if parts.len() == 1 => return None,
        Some("mod") => {
            parts.pop();
        }
        _ => {}
    }
    Some(parts.join("::"))
}

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

/// The code of a file: comments and the contents of string literals removed, and the
/// `#[cfg(test)] mod tests` block at its end cut off.
fn code(text: &str) -> String {
    let mut kept = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() == "#[cfg(test)]" && lines.get(i + 1).is_some_and(|next| next.trim_start().starts_with("mod tests")) {
            break;
        }
        let mut out = String::new();
        let mut in_string = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if in_string => {
                    chars.next();
                }
                '"' => {
                    in_string = !in_string;
                    out.push('"');
                }
                '/' if !in_string && chars.peek() == Some(&'/') => break,
                _ if in_string => {}
                _ => out.push(c),
            }
        }
        kept.push(out);
    }
    kept.join("\n")
}

/// The full paths of a `use` tree (`crate::{a::{self, B}, c::*}` → `crate::a`, `crate::a::B`, `crate::c`).
fn use_paths(tree: &str) -> Vec<String> {
    fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        if let Some(open) = tree.find('{') {
            let head = tree[..open].trim().trim_end_matches("::");
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let base = join(prefix, head);
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&base, &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(&base, &inner[start..], out);
        } else if !tree.is_empty() {
            let path = tree.split(" as ").next().unwrap_or(tree).trim();
            let path = path.trim_end_matches("::*").trim_end_matches("*");
            let path = if path == "self" { String::new() } else { path.trim_end_matches("::self").to_string() };
            out.push(join(prefix, &path));
        }
    }
    fn join(a: &str, b: &str) -> String {
        match (a.is_empty(), b.is_empty()) {
            (true, _) => b.to_string(),
            (_, true) => a.to_string(),
            _ => format!("{a}::{b}"),
        }
    }
    let mut out = Vec::new();
    expand("", &tree.split_whitespace().collect::<Vec<_>>().join(" "), &mut out);
    out
}

/// The module a path names from module `from`, if it is one of this crate's: the longest
/// known module prefix of the absolute path.
fn resolve(from: &str, path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = if from.is_empty() { Vec::new() } else { from.split("::").map(String::from).collect() };
    match segments.first().copied() {
        Some("crate") => {
            base.clear();
            segments.remove(0);
        }
        Some("self") => {
            segments.remove(0);
        }
        Some("super") => {
            while segments.first() == Some(&"super") {
                base.pop()?;
                segments.remove(0);
            }
        }
        Some(first) if modules.contains(&child(from, first)) => {}
        _ => return None,
    }
    let mut best = base.join("::");
    for s in segments {
        base.push(s.to_string());
        let candidate = base.join("::");
        if modules.contains(&candidate) {
            best = candidate;
        } else {
            break;
        }
    }
    Some(best)
}

fn child(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}::{name}")
    }
}

/// Every module of `src/` and the modules each one names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let sources: Vec<(String, String)> = all.iter().filter_map(|f| Some((module_of(&src, f)?, code(&std::fs::read_to_string(f).expect("read"))))).collect();
    let modules: BTreeSet<String> = sources.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in &sources {
        let mut paths = Vec::new();
        // `use` trees (a relative first segment is a child module here).
        for statement in text.split(';') {
            let at = statement.match_indices("use ").map(|(i, _)| i).find(|&i| i == 0 || !statement[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'));
            if let Some(i) = at {
                paths.extend(use_paths(&statement[i + 4..]));
            }
        }
        // Paths in code: `crate::a::b`, `super::x`, `self::x`, `child::x`.
        let bytes: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < bytes.len() {
            let starts = (bytes[i].is_ascii_lowercase() || bytes[i] == '_')
                && (i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_' || bytes[i - 1] == ':' || bytes[i - 1] == '$'));
            if starts {
                let mut j = i;
                while j < bytes.len()
                    && (bytes[j].is_alphanumeric() || bytes[j] == '_' || (bytes[j] == ':' && bytes.get(j + 1) == Some(&':')) || (bytes[j] == ':' && j > 0 && bytes[j - 1] == ':'))
                {
                    j += 1;
                }
                let word: String = bytes[i..j].iter().collect();
                if word.contains("::") {
                    paths.push(word);
                }
                i = j.max(i + 1);
            } else {
                i += 1;
            }
        }
        let targets = edges.entry(module.clone()).or_default();
        for path in paths {
            if let Some(target) = resolve(module, &path, &modules) {
                if target != *module {
                    targets.insert(target);
                }
            }
        }
    }
    edges
}

/// The strongly connected components with more than one module (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(v: &'a str, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w.as_str()) {
                visit(w, s);
                let low = s.low[v].min(s.low[w.as_str()]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w.as_str()) {
                let low = s.low[v].min(s.index[w.as_str()]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), found: Vec::new() };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(v, &mut s);
        }
    }
    s.found
}

/// One cycle through `start` inside its component, as `a → b → a`.
fn one_cycle(start: &str, component: &[String], edges: &BTreeMap<String, BTreeSet<String>>) -> String {
    let inside: BTreeSet<&str> = component.iter().map(String::as_str).collect();
    let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in edges.get(v).into_iter().flatten().map(String::as_str).filter(|w| inside.contains(w)) {
            if w == start {
                let mut path = vec![v];
                let mut at = v;
                while let Some(&p) = previous.get(at) {
                    path.push(p);
                    at = p;
                }
                path.reverse();
                path.push(start);
                let name = |m: &str| if m.is_empty() { "crate".to_string() } else { m.to_string() };
                return path.iter().map(|m| name(m)).collect::<Vec<_>>().join(" → ");
            }
            if !previous.contains_key(w) && w != start {
                previous.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    String::new()
}

#[test]
fn the_module_graph_has_no_cycle() {
    let edges = graph();
    assert!(edges.len() > 100, "{} modules read", edges.len());
    let found = cycles(&edges);
    let report: Vec<String> = found
        .iter()
        .map(|c| {
            let inside: Vec<String> = c.iter().flat_map(|m| edges[m].iter().filter(|t| c.contains(t)).map(move |t| format!("{m} → {t}"))).collect();
            format!("{} modules: {}\n    e.g. {}\n    edges inside: {}", c.len(), c.join(", "), one_cycle(&c[0], c, &edges), inside.join("; "))
        })
        .collect();
    assert!(found.is_empty(), "{} import cycles:\n{}", found.len(), report.join("\n"));
}

/// The reader itself: a child importing its parent, a parent re-exporting the child, a
/// sibling pair and a relative child path are edges; declarations, strings and comments are not.
#[test]
fn the_reader_finds_the_edges_it_should() {
    assert_eq!(use_paths("crate::{a::{self, B}, c::*}"), ["crate::a", "crate::a::B", "crate::c"]);
    assert_eq!(use_paths("super::x as y"), ["super::x"]);
    let modules: BTreeSet<String> = ["", "a", "a::b", "a::c", "d"].iter().map(|s| s.to_string()).collect();
    assert_eq!(resolve("a::b", "super::Thing", &modules).as_deref(), Some("a"));
    assert_eq!(resolve("a::b", "super::c::f", &modules).as_deref(), Some("a::c"));
    assert_eq!(resolve("a", "b::X", &modules).as_deref(), Some("a::b"));
    assert_eq!(resolve("a", "serde::Serialize", &modules), None);
    assert_eq!(resolve("a::b", "crate::d::e::F", &modules).as_deref(), Some("d"));
    assert_eq!(code("let s = \"crate::d\"; // crate::a\nuse x;\n#[cfg(test)]\nmod tests {\n use super::*;\n}"), "let s = \"\"; \nuse x;");
    let mut edges = BTreeMap::new();
    edges.insert("a".to_string(), BTreeSet::from(["a::b".to_string()]));
    edges.insert("a::b".to_string(), BTreeSet::from(["a".to_string()]));
    edges.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    let found = cycles(&edges);
    assert_eq!(found, vec![vec!["a".to_string(), "a::b".to_string()]]);
    assert_eq!(one_cycle("a", &found[0], &edges), "a → a::b → a");
}
