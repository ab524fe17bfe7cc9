//! The floors of `src/`: every top-level module of the library sits on one floor, and a
//! module imports only modules on lower floors, so no two top-level modules import each
//! other, directly or around a circle. Imports are the `crate::` paths (and `super::`
//! paths that climb to the crate root) outside `#[cfg(test)]` items, read from the
//! module tree that `src/lib.rs` declares. The drawing in docs/architecture.md is this
//! table.
//!
//! `cargo test --test architecture` checks the tree it is built from; set
//! `ARCHITECTURE_SRC` to another `src/` directory to check that one instead (how the check
//! was shown to fail on a tree with circles).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The floors, ground floor first. A module imports only modules on floors below its own.
const FLOORS: &[&[&str]] = &[
    &["model", "yaml", "process", "selinux"],
    &["root", "host"],
    &["state", "facts", "scripts", "log_file"],
    &["plan", "timings"],
    &["apply", "failure"],
    &["cloud_config", "report", "source"],
    &["settings"],
    &["cloud_init", "hygiene"],
    &["engine", "clean"],
    &["applied"],
    &["boot"],
    &["cli", "test_api"],
];

/// Imports allowed against the floors for now, each with the reason it goes away (none:
/// a structural change that needs one names it here, and the check fails once it is gone).
const KNOWN: &[(&str, &str, &str)] = &[];

/// Which top-level module imports which, with the files that do.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

#[test]
fn no_upward_import_and_no_circle_between_top_level_modules() {
    let src = std::env::var_os("ARCHITECTURE_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let (tops, graph) = read_tree(&src);
    let problems = check(&tops, &graph);
    assert!(
        problems.is_empty(),
        "the floors of {} do not hold (tests/architecture.rs, docs/architecture.md):\n{}",
        src.display(),
        problems.join("\n")
    );
}

/// What is wrong with `graph` against [`FLOORS`] and [`KNOWN`], one line each.
fn check(tops: &BTreeSet<String>, graph: &Graph) -> Vec<String> {
    let mut problems = Vec::new();
    let mut floor_of = BTreeMap::new();
    for (n, floor) in FLOORS.iter().enumerate() {
        for m in *floor {
            if floor_of.insert(*m, n).is_some() {
                problems.push(format!("{m} is on two floors of FLOORS"));
            }
        }
    }
    for m in tops {
        if !floor_of.contains_key(m.as_str()) {
            problems.push(format!(
                "the top-level module {m} is on no floor: add it to FLOORS (and to the \
                 drawing in docs/architecture.md)"
            ));
        }
    }
    for m in floor_of.keys() {
        if !tops.contains(*m) {
            problems.push(format!(
                "FLOORS names {m}, which src/lib.rs does not declare"
            ));
        }
    }
    let known = |a: &str, b: &str| KNOWN.iter().any(|(x, y, _)| *x == a && *y == b);
    for (a, targets) in graph {
        for (b, files) in targets {
            let (Some(fa), Some(fb)) = (floor_of.get(a.as_str()), floor_of.get(b.as_str())) else {
                continue;
            };
            if fb >= fa && !known(a, b) {
                problems.push(format!(
                    "{a} (floor {fa}) imports {b} (floor {fb}), which is not below it, in {}",
                    list(files)
                ));
            }
        }
    }
    for (a, b, why) in KNOWN {
        if !graph.get(*a).is_some_and(|t| t.contains_key(*b)) {
            problems.push(format!(
                "the known exception {a} -> {b} no longer occurs: remove it from KNOWN ({why})"
            ));
        }
    }
    let without_known: Graph = graph
        .iter()
        .map(|(a, t)| {
            let t = t
                .iter()
                .filter(|(b, _)| !known(a, b))
                .map(|(b, f)| (b.clone(), f.clone()))
                .collect();
            (a.clone(), t)
        })
        .collect();
    for (group, circle) in circles(&without_known) {
        let steps: Vec<String> = circle
            .windows(2)
            .map(|w| format!("{} -> {} ({})", w[0], w[1], list(&graph[&w[0]][&w[1]])))
            .collect();
        problems.push(format!(
            "import circle: {}; the {} modules that reach each other: {}",
            steps.join(", "),
            group.len(),
            group.join(", ")
        ));
    }
    for (_, circle) in circles(graph) {
        if circle.windows(2).any(|w| known(&w[0], &w[1])) {
            eprintln!(
                "known import circle, allowed until its exception goes: {}",
                circle.join(" -> ")
            );
        }
    }
    problems
}

/// A few of `files`, for a message.
fn list(files: &BTreeSet<String>) -> String {
    let shown: Vec<&str> = files.iter().take(3).map(String::as_str).collect();
    let more = files.len().saturating_sub(3);
    if more == 0 {
        shown.join(", ")
    } else {
        format!("{} and {more} more", shown.join(", "))
    }
}

/// Each group of modules that reach each other (Tarjan's strongly connected components),
/// sorted, with one shortest circle through its first module (repeated at the end).
fn circles(graph: &Graph) -> Vec<(Vec<String>, Vec<String>)> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        groups: Vec<Vec<&'g str>>,
    }
    fn visit<'g>(w: &mut Walk<'g>, v: &'g str) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on_stack.insert(v);
        for u in w.graph.get(v).into_iter().flat_map(|t| t.keys()) {
            let u = u.as_str();
            if !w.index.contains_key(u) {
                visit(w, u);
                let l = w.low[u].min(w.low[v]);
                w.low.insert(v, l);
            } else if w.on_stack.contains(u) {
                let l = w.index[u].min(w.low[v]);
                w.low.insert(v, l);
            }
        }
        if w.low[v] == w.index[v] {
            let mut group = Vec::new();
            while let Some(u) = w.stack.pop() {
                w.on_stack.remove(u);
                group.push(u);
                if u == v {
                    break;
                }
            }
            if group.len() > 1 {
                w.groups.push(group);
            }
        }
    }
    let mut w = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for v in graph.keys() {
        if !w.index.contains_key(v.as_str()) {
            visit(&mut w, v);
        }
    }
    w.groups
        .iter()
        .map(|group| {
            let members: BTreeSet<&str> = group.iter().copied().collect();
            let start = *members.iter().next().unwrap();
            // The shortest way back to `start` inside the group (breadth first).
            let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([start]);
            let mut last = start;
            'search: while let Some(v) = queue.pop_front() {
                for u in graph[v].keys().map(String::as_str) {
                    if !members.contains(u) {
                        continue;
                    }
                    if u == start {
                        last = v;
                        break 'search;
                    }
                    if !came_from.contains_key(u) {
                        came_from.insert(u, v);
                        queue.push_back(u);
                    }
                }
            }
            let mut path = vec![start.to_string()];
            let mut v = last;
            while v != start {
                path.push(v.to_string());
                v = came_from[v];
            }
            path.push(start.to_string());
            let end = path.len() - 1;
            path[1..end].reverse();
            (members.iter().map(|m| m.to_string()).collect(), path)
        })
        .collect()
}

/// The top-level modules `src/lib.rs` declares, and which of them each imports.
fn read_tree(src: &Path) -> (BTreeSet<String>, Graph) {
    let lib = read(&src.join("lib.rs"));
    let tops: BTreeSet<String> = declared_modules(&without_test_items(&lexed(&lib)))
        .into_iter()
        .collect();
    let mut graph = Graph::new();
    for top in &tops {
        let file = module_file(src, top);
        walk(
            src,
            &file,
            top,
            std::slice::from_ref(top),
            &tops,
            &mut graph,
        );
    }
    (tops, graph)
}

/// Reads one module file and, through its `mod` declarations, its children.
fn walk(
    src: &Path,
    file: &Path,
    top: &str,
    path: &[String],
    tops: &BTreeSet<String>,
    graph: &mut Graph,
) {
    let code = without_test_items(&lexed(&read(file)));
    let shown = file.strip_prefix(src).unwrap_or(file).display().to_string();
    for target in imports(&code, path.len()) {
        if target != top && tops.contains(&target) {
            graph
                .entry(top.to_string())
                .or_default()
                .entry(target)
                .or_default()
                .insert(shown.clone());
        }
    }
    let own_dir = match file.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs") => file.parent().unwrap().to_path_buf(),
        _ => file.with_extension(""),
    };
    for child in declared_modules(&code) {
        let child_file = module_file(&own_dir, &child);
        let mut child_path = path.to_vec();
        child_path.push(child);
        walk(src, &child_file, top, &child_path, tops, graph);
    }
}

fn read(file: &Path) -> String {
    fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()))
}

/// `dir/name.rs`, or else `dir/name/mod.rs`.
fn module_file(dir: &Path, name: &str) -> PathBuf {
    let flat = dir.join(format!("{name}.rs"));
    if flat.is_file() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

/// The code with comments, string and character literals emptied (their quotes kept), so
/// that a `crate::` in a comment, a doc line or a message is not an import.
fn lexed(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r')))
            && (i == 0 || !ident(c[i - 1]))
            && {
                let mut j = i + if c[i] == 'b' { 2 } else { 1 };
                while c.get(j) == Some(&'#') {
                    j += 1;
                }
                c.get(j) == Some(&'"')
            }
        {
            // A raw string: `r#"…"#`, as many `#` closing as opening.
            i += if c[i] == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while c[i] == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            while i < c.len() {
                if c[i] == '"' && (0..hashes).all(|k| c.get(i + 1 + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c[i] == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or else a lifetime ('a).
            if c.get(i + 1) == Some(&'\\') {
                let mut j = i + 2;
                while j < c.len() && c[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// `code` without the items marked `#[cfg(test)]` (a test module, a test-only import or
/// function); a test module declared as `mod tests;` goes with its declaration, so its
/// file is never read.
fn without_test_items(code: &str) -> String {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(ATTR) {
        out.push_str(&rest[..at]);
        let item = &rest[at + ATTR.len()..];
        let b = item.as_bytes();
        let mut depth = 0i32;
        let mut end = item.len();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                b'{' if depth == 0 => {
                    let mut braces = 0;
                    let mut j = i;
                    while j < b.len() {
                        match b[j] {
                            b'{' => braces += 1,
                            b'}' => {
                                braces -= 1;
                                if braces == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    end = (j + 1).min(b.len());
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The names of `mod name;` declarations (modules in files of their own).
fn declared_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let words = words(code);
    for w in words.windows(3) {
        if w[0] == "mod" && is_ident(&w[1]) && w[2] == ";" {
            out.push(w[1].clone());
        }
    }
    out
}

/// The top-level modules `code` names through `crate::`, or through `super::` climbing to
/// the crate root from a module `depth` levels deep (inline modules add a level each).
fn imports(code: &str, depth: usize) -> BTreeSet<String> {
    let words = words(code);
    let mut out = BTreeSet::new();
    let mut inline: Vec<i32> = Vec::new();
    let mut braces = 0i32;
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        match w {
            "{" => braces += 1,
            "}" => {
                braces -= 1;
                if inline.last() == Some(&braces) {
                    inline.pop();
                }
            }
            "mod" if words.get(i + 2).is_some_and(|n| n == "{") => {
                inline.push(braces);
            }
            _ => {}
        }
        let starts_path = i == 0 || (words[i - 1] != "::" && words[i - 1] != "$");
        let at_root = if w == "crate" && starts_path && words.get(i + 1).is_some_and(|n| n == "::")
        {
            Some(i + 2)
        } else if w == "super" && starts_path {
            let mut j = i;
            let mut climbs = 0;
            while words.get(j).is_some_and(|n| n == "super")
                && words.get(j + 1).is_some_and(|n| n == "::")
            {
                climbs += 1;
                j += 2;
            }
            (climbs > 0 && climbs >= depth + inline.len()).then_some(j)
        } else {
            None
        };
        if let Some(at) = at_root {
            out.extend(path_heads(&words, at));
        }
        i += 1;
    }
    out
}

/// The first segment of the path at `words[at]`, or of each path in a `{…}` group.
fn path_heads(words: &[String], at: usize) -> Vec<String> {
    match words.get(at).map(String::as_str) {
        Some("{") => {
            let mut heads = Vec::new();
            let mut depth = 0;
            let mut expect_head = true;
            for w in &words[at..] {
                match w.as_str() {
                    "{" => {
                        depth += 1;
                        if depth == 1 {
                            continue;
                        }
                    }
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    "," if depth == 1 => {
                        expect_head = true;
                        continue;
                    }
                    _ => {}
                }
                if expect_head && depth == 1 {
                    if is_ident(w) && w != "self" {
                        heads.push(w.clone());
                    }
                    expect_head = false;
                }
            }
            heads
        }
        Some(w) if is_ident(w) => vec![w.to_string()],
        _ => Vec::new(),
    }
}

/// Identifiers, `::`, and every other character on its own; white space dropped.
fn words(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i].is_whitespace() {
            i += 1;
        } else if c[i].is_alphanumeric() || c[i] == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(c[start..i].iter().collect());
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".to_string());
            i += 2;
        } else {
            out.push(c[i].to_string());
            i += 1;
        }
    }
    out
}

fn is_ident(w: &str) -> bool {
    w.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// The reader itself: what counts as an import and what does not.
#[test]
fn imports_are_read_from_code_only() {
    let cases: &[(&str, usize, &[&str])] = &[
        ("use crate::plan::Action;", 1, &["plan"]),
        ("use crate::{model, root::Root};", 1, &["model", "root"]),
        ("use crate::{self as c, a::{b, c}, d};", 1, &["a", "d"]),
        (
            "let x = crate :: failure :: Failure::new();",
            2,
            &["failure"],
        ),
        ("pub(crate) fn f() {}", 1, &[]),
        (
            "// use crate::boot;\n/* crate::cli */ /// [`crate::engine`]",
            1,
            &[],
        ),
        (
            "let s = \"crate::boot\"; let r = r#\"crate::cli\"#;",
            1,
            &[],
        ),
        (
            "fn f<'a>(x: &'a str) -> char { '{' } use crate::host;",
            1,
            &["host"],
        ),
        ("macro_rules! m { () => { $crate::boot::x() } }", 1, &[]),
        ("use super::late;", 2, &[]),
        ("use super::super::engine::x;", 2, &["engine"]),
        ("use super::{report, source};", 1, &["report", "source"]),
        ("mod imp { use super::super::boot; }", 2, &[]),
        ("mod imp { use super::super::super::boot; }", 2, &["boot"]),
        (
            "#[cfg(test)]\nmod tests { use crate::boot; }\nuse crate::root;",
            1,
            &["root"],
        ),
        (
            "#[cfg(test)]\nuse crate::boot;\nuse crate::root;",
            1,
            &["root"],
        ),
    ];
    for (code, depth, want) in cases {
        let got = imports(&without_test_items(&lexed(code)), *depth);
        let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
        assert_eq!(got, want, "{code}");
    }
    assert_eq!(
        declared_modules(&without_test_items(&lexed(
            "pub mod a;\nmod b;\n#[cfg(test)]\nmod tests;\npub(crate) mod c;\nmod d { }"
        ))),
        ["a", "b", "c"]
    );
}

/// A tree with an upward import and a circle is refused, naming both.
#[test]
fn an_upward_import_and_a_circle_are_named() {
    let tops: BTreeSet<String> = FLOORS
        .iter()
        .flat_map(|f| f.iter())
        .map(|m| m.to_string())
        .collect();
    let mut graph = Graph::new();
    let mut add = |a: &str, b: &str, f: &str| {
        graph
            .entry(a.to_string())
            .or_default()
            .entry(b.to_string())
            .or_default()
            .insert(f.to_string());
    };
    for (a, b, _) in KNOWN {
        add(a, b, "known.rs");
    }
    add("settings", "plan", "settings.rs");
    add("plan", "settings", "plan/network/renderers.rs");
    let problems = check(&tops, &graph);
    assert!(
        problems.iter().any(
            |p| p.starts_with("plan (floor 3) imports settings (floor 6)")
                && p.ends_with("in plan/network/renderers.rs")
        ),
        "{problems:#?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("import circle: plan -> settings")),
        "{problems:#?}"
    );
    assert_eq!(problems.len(), 2, "{problems:#?}");
}
