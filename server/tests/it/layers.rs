//! The declared layers held to the code: `pipebench`'s folders, each using only
//! those listed after it in `bench/src/lib.rs`, and the server's rooms, each
//! using only those after it in `server/src/lib.rs` (or the shared ones it names).
//! The orders are read from those docs, so the docs and this test cannot drift.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's root folder.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("server/ has a parent")
        .to_path_buf()
}

/// The words inside backticks or `[`...`]` links of `text`, in order.
fn ticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .collect()
}

/// `pipebench`'s layers, top first: the `//! - [`name`]:` list of its lib.rs.
fn bench_order() -> Vec<String> {
    let lib = std::fs::read_to_string(root().join("bench/src/lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! - [`"))
        .map(|l| l.split('`').next().unwrap().to_string())
        .collect()
}

/// The server's rooms, top first, and the shared modules any room may use:
/// the `Rooms, ...` and `Any room may use: ...` sentences of its lib.rs.
fn server_order() -> (Vec<String>, BTreeSet<String>) {
    let lib = std::fs::read_to_string(root().join("server/src/lib.rs")).unwrap();
    let doc: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    let rooms = doc
        .split_once("Rooms, each using only those after it:")
        .expect("server/src/lib.rs names its rooms")
        .1;
    let (rooms, rest) = rooms
        .split_once("Any room may use:")
        .expect("and its shared modules");
    let shared = rest.split_once('(').map_or(rest, |(before, _)| before);
    let mut any: BTreeSet<String> = ticked(shared).into_iter().collect();
    // The shared list goes on after the parenthesis: take its names up to the sentence's end.
    let tail = rest.split_once(')').map_or("", |(_, after)| after);
    let tail = tail.split_once(". ").map_or(tail, |(sentence, _)| sentence);
    any.extend(ticked(tail));
    (ticked(rooms), any)
}

/// For each top-level module of `src` (a folder or a file), the crate modules
/// its files name (`crate::x` or `pipebench::x`, also inside `use crate::{...}`),
/// with where: `name -> [(file, line)]`.
fn uses(src: &str) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut found: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut files = Vec::new();
    collect(&root().join(src), &mut files);
    for file in files {
        let rel = file
            .strip_prefix(root().join(src))
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let room = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let mut in_group = false;
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            let mut names = Vec::new();
            for prefix in ["crate::", "pipebench::"] {
                for (i, _) in code.match_indices(prefix) {
                    names.push(module_name(&code[i + prefix.len()..]));
                }
            }
            // `use crate::{a, b::c, ...}` across lines: each item's first name.
            if code.contains("use crate::{") {
                in_group = true;
            }
            if in_group {
                let inside = code.split_once("crate::{").map_or(code, |(_, after)| after);
                names.extend(inside.split(',').map(|item| module_name(item.trim())));
                if code.contains("};") {
                    in_group = false;
                }
            }
            for name in names.into_iter().filter(|n| !n.is_empty() && *n != room) {
                found
                    .entry(room.clone())
                    .or_default()
                    .entry(name)
                    .or_default()
                    .push(format!("{src}/{rel}:{}", n + 1));
            }
        }
    }
    found
}

/// The module name `path` starts with (`jobs` of `jobs::ws::serve`).
fn module_name(path: &str) -> String {
    path.chars()
        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
        .collect()
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The uses that break `order` (a room may use only those after it, or `any`).
fn breaches(
    uses: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
    order: &[String],
    any: &BTreeSet<String>,
) -> Vec<String> {
    let place = |name: &str| order.iter().position(|o| o == name);
    let mut bad = Vec::new();
    for (room, names) in uses {
        let Some(here) = place(room) else { continue };
        for (name, at) in names {
            let allowed = any.contains(name) || place(name).is_none_or(|there| there > here);
            if !allowed {
                bad.push(format!(
                    "{room} uses {name} (above it) at {}",
                    at.join(", ")
                ));
            }
        }
    }
    bad
}

#[test]
fn every_bench_folder_uses_only_the_layers_declared_below_it() {
    let order = bench_order();
    assert!(
        order.len() >= 10,
        "bench/src/lib.rs lists its layers: {order:?}"
    );
    let bad = breaches(&uses("bench/src"), &order, &BTreeSet::new());
    assert!(
        bad.is_empty(),
        "pipebench's layers (bench/src/lib.rs): {bad:#?}"
    );
}

#[test]
fn every_server_room_uses_only_the_rooms_declared_below_it() {
    let (order, any) = server_order();
    assert!(
        order.len() >= 8,
        "server/src/lib.rs orders its rooms: {order:?}"
    );
    assert!(any.contains("state"), "{any:?}");
    let bad = breaches(&uses("server/src"), &order, &any);
    assert!(
        bad.is_empty(),
        "the server's rooms (server/src/lib.rs): {bad:#?}"
    );
}

#[test]
fn a_use_from_above_is_a_breach_and_a_shared_or_lower_one_is_not() {
    let order: Vec<String> = ["top", "middle", "bottom"].map(String::from).to_vec();
    let any: BTreeSet<String> = ["state".to_string()].into();
    let mut uses: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let at = |s: &str| vec![s.to_string()];
    uses.entry("middle".into())
        .or_default()
        .insert("bottom".into(), at("m.rs:1"));
    uses.entry("middle".into())
        .or_default()
        .insert("state".into(), at("m.rs:2"));
    uses.entry("bottom".into())
        .or_default()
        .insert("top".into(), at("b.rs:3"));
    assert_eq!(
        breaches(&uses, &order, &any),
        ["bottom uses top (above it) at b.rs:3"]
    );
    assert_eq!(ticked("`a` > `b` and [`c`]"), ["a", "b", "c"]);
}
