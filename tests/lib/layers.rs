//! The house rules of `src/` that the crate docs (`src/lib.rs`) state,
//! checked on the source text: imports point down the layers, the report
//! layer opens no file and calls no analysis, a command file stays thin,
//! no two files share a name, and a command's rows are not copied into
//! structs of their own for text or CSV. The checks read code lines only (not
//! comments, not the test modules at the end of a file).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, lowest first, by the first component of a path below `src/`.
fn rank(top: &str) -> Option<u8> {
    Some(match top {
        "format" | "error" => 1,
        "log" => 2,
        "offsets" | "txn" | "metadata" | "cluster" | "tiered" => 3,
        "inspect" | "demo" | "export" => 4,
        "report" => 5,
        "exit" => 6,
        "cmd" => 7,
        "cli" | "main" | "lib" => 8,
        _ => return None,
    })
}

/// The library's folders: `crate::` in them names the library.
const LIBRARY: &[&str] = &[
    "format", "log", "offsets", "txn", "metadata", "cluster", "tiered", "inspect", "demo", "export",
];

struct Source {
    /// The path below `src/`, with `/`.
    rel: String,
    /// The first component, without `.rs`.
    top: String,
    /// The code lines before the test module, comments left out.
    code: String,
}

/// Note `what` in `found` when the code of `s` uses it.
fn note_use(s: &Source, what: &str, found: &mut Vec<String>) {
    if s.code.contains(what) {
        found.push(format!("{}: {what}", s.rel));
    }
}

fn sources() -> Vec<Source> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let top = rel.split('/').next().unwrap().trim_end_matches(".rs");
        let text = std::fs::read_to_string(path).unwrap();
        let code: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("#[cfg(test)]"))
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect();
        out.push(Source {
            top: top.to_string(),
            rel,
            code: code.join("\n"),
        });
    }
    assert!(out.len() > 100, "only {} files under src/", out.len());
    out
}

/// Every `crate::X` and `kaen_log::X` the code names, as the top-level
/// module X it names.
fn named_tops<'a>(code: &'a str, prefix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    code.match_indices(prefix).filter_map(move |(at, _)| {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let rest = &code[at + prefix.len()..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        Some(&rest[..end])
    })
}

#[test]
fn imports_point_down_the_layers() {
    let mut up = Vec::new();
    for s in sources() {
        let own = rank(&s.top).unwrap_or_else(|| panic!("{}: no layer for {}", s.rel, s.top));
        let in_library = LIBRARY.contains(&s.top.as_str());
        let mut named: Vec<&str> = named_tops(&s.code, "kaen_log::").collect();
        if in_library {
            named.extend(named_tops(&s.code, "crate::"));
        } else {
            // The binary's own modules; the library's names come as kaen_log::.
            named.extend(named_tops(&s.code, "crate::").filter(|t| !LIBRARY.contains(t)));
        }
        for top in named {
            // Re-exports at the crate root (DecodeError, Result, ...) are format's.
            let theirs = rank(top).unwrap_or(1);
            if theirs > own {
                up.push(format!("{} names {top}", s.rel));
            }
        }
    }
    up.sort();
    up.dedup();
    assert!(up.is_empty(), "imports pointing up: {up:#?}");
}

#[test]
fn the_report_layer_opens_no_file_and_names_only_documents_of_inspect() {
    let mut found = Vec::new();
    for s in sources().into_iter().filter(|s| s.top == "report") {
        for io in [
            "fs::read",
            "fs::write",
            "fs::metadata",
            "fs::rename",
            "fs::remove",
            "fs::copy",
            "fs::create_dir",
            "File::open",
            "File::create",
            "OpenOptions",
            "read_dir",
            ".is_dir()",
            ".is_file()",
            ".exists()",
            "canonicalize",
            "symlink_metadata",
        ] {
            note_use(&s, io, &mut found);
        }
        // What report takes from inspect are documents (types, named in
        // CamelCase), never analysis (functions, in snake_case).
        for (at, _) in s.code.match_indices("kaen_log::inspect::") {
            let path: String = s.code[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '{' | ',' | ' '))
                .collect();
            let last = path
                .trim_end_matches(|c: char| !c.is_alphanumeric())
                .rsplit([':', '{', ',', ' '])
                .find(|n| !n.is_empty())
                .unwrap_or("");
            if last.starts_with(|c: char| c.is_lowercase()) && !path.contains('{') {
                found.push(format!("{}: {path}", s.rel));
            }
            for item in path
                .split('{')
                .nth(1)
                .into_iter()
                .flat_map(|l| l.split(','))
            {
                let item = item.trim();
                if item.starts_with(|c: char| c.is_lowercase()) && item != "self" {
                    found.push(format!("{}: {item} from {path}", s.rel));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "report/ reaching past its documents: {found:#?}"
    );
}

/// Every read of a segment, an index or a file beside them goes through
/// the read seam: the reader and its positioned read
/// (`log::read::read_exact_at`) in `src/log/read/`, and the opening and
/// whole reads of small files (`log::files::read_regular`, `read_up_to`)
/// in `src/log/files.rs`. Reads of what is not a log's file are named
/// here with why.
#[test]
fn every_read_of_a_log_goes_through_the_seam() {
    const NOT_LOG_FILES: &[(&str, &str)] = &[
        ("format/compression.rs", "decompresses bytes in memory"),
        (
            "cluster/merge/mod.rs",
            "reads summary documents that `klog summary` wrote",
        ),
        (
            "demo/delivery.rs",
            "reads the marker of the demonstration's own folder",
        ),
    ];
    let mut found = Vec::new();
    for s in sources() {
        if s.rel.starts_with("log/read/") || s.rel == "log/files.rs" {
            continue;
        }
        for read in ["FileExt", ".read_exact_at(", ".read_at(", "SeekFrom"] {
            note_use(&s, read, &mut found);
        }
        if NOT_LOG_FILES.iter().any(|(f, _)| *f == s.rel) {
            continue;
        }
        for read in [
            "read_to_end",
            "fs::read(",
            "fs::read_to_string(",
            "read_to_string(",
        ] {
            note_use(&s, read, &mut found);
        }
    }
    assert!(found.is_empty(), "reads beside the seam: {found:#?}");
}

/// The layout views (`src/inspect/layout/`) are the decoders' trace, not a
/// second decoder: they read no number, varint or length themselves (no
/// `Cursor` read, no `from_be_bytes`, no varint decoding); every field they
/// show comes to them from a decoder through `format::trace::Trace`.
#[test]
fn the_layout_views_decode_nothing_themselves() {
    let reads = [
        "i8", "i16", "u16", "i32", "u32", "i64", "varint", "varlong", "uvarint",
    ];
    let mut found = Vec::new();
    let layout: Vec<Source> = sources()
        .into_iter()
        .filter(|s| s.rel.starts_with("inspect/layout/"))
        .collect();
    assert!(layout.len() >= 3, "only {} layout files", layout.len());
    for s in &layout {
        for r in reads {
            note_use(s, &format!(".{r}()"), &mut found);
            note_use(s, &format!("Cursor::{r}"), &mut found);
        }
        for what in [
            "varint_bytes",
            "from_be_bytes",
            "from_le_bytes",
            "decode_varint",
            "decode_varlong",
            "decode_uvarint",
            "split_whitespace",
            "split_once",
        ] {
            note_use(s, what, &mut found);
        }
    }
    assert!(
        found.is_empty(),
        "the layout reads fields itself: {found:#?}"
    );
    let traced = layout
        .iter()
        .filter(|s| s.code.contains("format::trace::"))
        .count();
    assert!(traced >= 2, "the layout takes no decoder's trace");
}

/// A command file parses options, calls the library and hands one document
/// to a renderer: no file below `src/cmd/` has more than 400 code lines
/// before its tests (lines neither blank nor comments).
#[test]
fn command_files_stay_thin() {
    let fat: Vec<(String, usize)> = sources()
        .into_iter()
        .filter(|s| s.top == "cmd")
        .map(|s| {
            let lines = s.code.lines().filter(|l| !l.trim().is_empty()).count();
            (s.rel, lines)
        })
        .filter(|(_, n)| *n > 400)
        .collect();
    assert!(fat.is_empty(), "command files over 400 code lines: {fat:?}");
}

/// No two files below `src/` share a name (`mod.rs` aside), so a name
/// says where a file is.
#[test]
fn no_two_source_files_share_a_name() {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in sources() {
        let name = Path::new(&s.rel)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if name != "mod.rs" {
            by_name.entry(name).or_default().push(s.rel);
        }
    }
    let shared: Vec<_> = by_name.into_iter().filter(|(_, v)| v.len() > 1).collect();
    assert!(shared.is_empty(), "file names used twice: {shared:?}");
}

/// The module path of a file below `src/` (`log/read/mod.rs` is
/// `log::read`; `lib.rs` and `main.rs` are the root).
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") || parts == ["lib"] || parts == ["main"] {
        parts.pop();
    }
    parts
}

/// Every module path the code names through `crate::`, `kaen_log::`,
/// `super::` or `self::` (with the items of a `{…}` group), made absolute.
fn named_paths(code: &str, own: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for root in ["crate::", "kaen_log::", "super::", "self::"] {
        for (at, _) in code.match_indices(root) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let rest = &code[at + root.len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let mut base: Vec<String> = match root {
                "super::" => own[..own.len().saturating_sub(1)].to_vec(),
                "self::" => own.to_vec(),
                _ => Vec::new(),
            };
            let path = rest[..end].trim_end_matches(':');
            base.extend(path.split("::").filter(|s| !s.is_empty()).map(String::from));
            if rest[end..].starts_with('{') {
                let group = &rest[end + 1..rest[end..].find('}').map_or(end, |e| end + e)];
                for item in group.split(',') {
                    let item = item.split(" as ").next().unwrap_or("").trim();
                    if !item.is_empty() && item != "self" {
                        let mut p = base.clone();
                        p.extend(item.split("::").map(String::from));
                        out.push(p);
                    }
                }
            }
            out.push(base);
        }
    }
    out
}

/// No circle of imports between files: a file's names may lead back to
/// its own folder's `mod.rs` (its parent), never round to itself.
#[test]
fn no_import_circles() {
    let sources = sources();
    let modules: BTreeMap<Vec<String>, usize> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| (module_of(&s.rel), i))
        .collect();
    let edges: Vec<Vec<usize>> = sources
        .iter()
        .map(|s| {
            let own = module_of(&s.rel);
            let mut to: Vec<usize> = named_paths(&s.code, &own)
                .into_iter()
                .filter_map(|p| {
                    (1..=p.len())
                        .rev()
                        .find_map(|n| modules.get(&p[..n]))
                        .copied()
                })
                .filter(|&t| {
                    let target = module_of(&sources[t].rel);
                    // Itself, or a module it sits in.
                    !(target.len() <= own.len() && own[..target.len()] == target[..])
                })
                .collect();
            to.sort();
            to.dedup();
            to
        })
        .collect();
    // A depth-first search for a back edge.
    let mut state = vec![0u8; sources.len()];
    let mut stack: Vec<usize> = Vec::new();
    fn visit(
        v: usize,
        edges: &[Vec<usize>],
        state: &mut [u8],
        stack: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        state[v] = 1;
        stack.push(v);
        for &w in &edges[v] {
            if state[w] == 1 {
                let from = stack.iter().position(|&x| x == w).unwrap_or(0);
                return Some(stack[from..].to_vec());
            }
            if state[w] == 0 {
                if let Some(c) = visit(w, edges, state, stack) {
                    return Some(c);
                }
            }
        }
        stack.pop();
        state[v] = 2;
        None
    }
    for v in 0..sources.len() {
        if state[v] == 0 {
            if let Some(circle) = visit(v, &edges, &mut state, &mut stack) {
                let names: Vec<&str> = circle.iter().map(|&i| sources[i].rel.as_str()).collect();
                panic!("an import circle: {names:?}");
            }
        }
    }
}

/// The serializable structs of `code`: each name and the text of its body
/// (`{...}` or `(...)`), fields marked `#[serde(skip)]` left out.
fn serialized_structs(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("#[derive(") {
        let rest = &code[at..];
        let derive = &rest[..rest.find(")]").unwrap_or(0)];
        if !derive.contains("Serialize") {
            continue;
        }
        let Some(s) = rest.find("struct ") else {
            continue;
        };
        // The item the derive is on: nothing but attributes between them.
        let between = &rest[derive.len()..s];
        if between.contains(';') || between.contains('{') || between.contains(" fn ") {
            continue;
        }
        let after = &rest[s + "struct ".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = after.find(['{', '(', ';']) else {
            continue;
        };
        let (opening, closing) = match after.as_bytes()[open] {
            b'{' => ('{', '}'),
            b'(' => ('(', ')'),
            _ => {
                out.push((name, String::new()));
                continue;
            }
        };
        let mut depth = 0;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            if c == opening {
                depth += 1;
            } else if c == closing {
                depth -= 1;
                if depth == 0 {
                    end = open + i;
                    break;
                }
            }
        }
        let mut body = String::new();
        let mut skip = false;
        for line in after[open + 1..end].lines() {
            if line.contains("#[serde(skip)]") {
                skip = true;
            } else if skip && line.contains(':') {
                skip = false;
            } else if !skip {
                body.push_str(line);
                body.push('\n');
            }
        }
        out.push((name, body));
    }
    out
}

/// One shape per thing: every serializable struct of the commands is part
/// of what a command prints as JSON (reachable from a document: a type with
/// `impl Report`, the rows of a generic one such as `WriterReport<Commits>`,
/// or a `jsonl` line), so text and CSV pick their columns
/// from the JSON rows and the library's types (`report::table::Column`)
/// instead of copying a row into a struct of their own.
#[test]
fn command_rows_are_not_mirrored_for_text_or_csv() {
    let cmd: Vec<Source> = sources().into_iter().filter(|s| s.top == "cmd").collect();
    let structs: Vec<(String, String, String)> = cmd
        .iter()
        .flat_map(|s| {
            serialized_structs(&s.code)
                .into_iter()
                .map(|(name, body)| (s.rel.clone(), name, body))
        })
        .collect();
    assert!(
        structs.len() > 30,
        "only {} serializable structs",
        structs.len()
    );
    let all: String = cmd.iter().map(|s| s.code.as_str()).collect();
    let is_root = |name: &str| {
        all.contains(&format!("Report for {name} "))
            || all.contains(&format!("Report for {name}<"))
            || all.contains(&format!("Report<{name}>"))
            || all.match_indices(".line(").any(|(at, _)| {
                all[at..]
                    .chars()
                    .take(200)
                    .collect::<String>()
                    .contains(&format!("&{name} {{"))
            })
    };
    let mut reached: Vec<&str> = structs
        .iter()
        .filter(|(_, name, _)| is_root(name))
        .map(|(_, name, _)| name.as_str())
        .collect();
    assert!(reached.len() > 15, "only {} documents", reached.len());
    let mut i = 0;
    while i < reached.len() {
        let from = reached[i];
        for (_, _, body) in structs.iter().filter(|(_, n, _)| n == from) {
            for word in body.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                if let Some((_, name, _)) = structs.iter().find(|(_, n, _)| n == word) {
                    if !reached.contains(&name.as_str()) {
                        reached.push(name);
                    }
                }
            }
        }
        i += 1;
    }
    let mirrors: Vec<String> = structs
        .iter()
        .filter(|(_, name, _)| !reached.contains(&name.as_str()))
        .map(|(rel, name, _)| format!("{rel}: {name}"))
        .collect();
    assert!(
        mirrors.is_empty(),
        "serializable structs that no JSON output holds (text or CSV copies of a row: \
         list the row's columns with report::table::Column instead): {mirrors:?}"
    );
}
