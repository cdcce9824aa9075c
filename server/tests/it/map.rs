//! ARCHITECTURE.md's map of modules held to the tree: every module it names exists,
//! and every source module (each `.rs` under `bench/src` and `server/src`, each page
//! module in `book/theme/pipebook`) is named in it.
//!
//! The map is the fenced block marked `map`: each line starts with the names of one
//! or more modules, then two spaces and what they are for. A name ending in `/` is a
//! folder (its `mod.rs`, or `NAME.rs` beside it) and the lines indented under it (two
//! spaces a level) name what is inside; other names are files in the folder above.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The workspace's root folder.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("server/ has a parent")
        .to_path_buf()
}

/// The paths the map names, relative to the root: files as they are, folders
/// ending in `/`; `Err` names a line the map's grammar cannot read.
fn named_in(map: &str) -> Result<Vec<String>, String> {
    let mut lines = map.lines();
    lines
        .find(|l| l.trim() == "```map")
        .ok_or("ARCHITECTURE.md has no ```map block")?;
    let mut folders: Vec<String> = Vec::new(); // the folder at each depth
    let mut named = Vec::new();
    for line in lines.take_while(|l| l.trim() != "```") {
        let indent = line.len() - line.trim_start().len();
        if indent % 2 != 0 || indent / 2 > folders.len() {
            return Err(format!("map line indented by {indent} spaces: {line:?}"));
        }
        let depth = indent / 2;
        folders.truncate(depth);
        let body = line.trim_start();
        let names = body.split("  ").next().unwrap_or_default();
        let above = folders.last().cloned().unwrap_or_default();
        let mut folder_here = None;
        for name in names.split_whitespace() {
            if !(name.ends_with(".rs") || name.ends_with(".js") || name.ends_with('/')) {
                return Err(format!(
                    "{name:?} is no module name (.rs, .js or a folder/): {line:?}"
                ));
            }
            let path = format!("{above}{name}");
            if name.ends_with('/') {
                folder_here = Some(path.clone());
            }
            named.push(path);
        }
        if let Some(folder) = folder_here {
            folders.push(folder);
        }
    }
    Ok(named)
}

/// Every file under `dir` (relative to the root) whose name ends with `ext`.
fn sources(dir: &str, ext: &str, found: &mut BTreeSet<String>) {
    let entries = std::fs::read_dir(root().join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
    for entry in entries {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{dir}{name}");
        if entry.file_type().unwrap().is_dir() {
            sources(&format!("{path}/"), ext, found);
        } else if name.ends_with(ext) {
            found.insert(path);
        }
    }
}

/// The map, read from ARCHITECTURE.md.
fn map() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    named_in(&text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_module_the_map_names_exists() {
    let gone: Vec<String> = map()
        .into_iter()
        .filter(|path| {
            let on_disk = root().join(path);
            !(if path.ends_with('/') {
                on_disk.is_dir()
            } else {
                on_disk.is_file()
            })
        })
        .collect();
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md's map names modules that do not exist (remove or rename their lines): {gone:?}"
    );
}

#[test]
fn every_source_module_is_named_in_the_map() {
    let named: BTreeSet<String> = map().into_iter().collect();
    // A folder named in the map covers its `mod.rs` and the `NAME.rs` beside it.
    let covered = |file: &str| {
        named.contains(file)
            || file
                .strip_suffix("mod.rs")
                .is_some_and(|folder| named.contains(folder))
            || file
                .strip_suffix(".rs")
                .is_some_and(|stem| named.contains(&format!("{stem}/")))
    };
    let mut found = BTreeSet::new();
    sources("bench/src/", ".rs", &mut found);
    sources("server/src/", ".rs", &mut found);
    sources("book/theme/pipebook/", ".js", &mut found);
    let missing: Vec<&String> = found.iter().filter(|f| !covered(f)).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's map does not name these modules (add a line for each): {missing:?}"
    );
}

#[test]
fn the_map_grammar_reads_folders_files_and_their_depth() {
    let map = "x\n```map\na/  the crate\n  b.rs c/  two\n    d.rs  in c\n  e.rs  in a\n```\n";
    assert_eq!(
        named_in(map).unwrap(),
        ["a/", "a/b.rs", "a/c/", "a/c/d.rs", "a/e.rs"]
    );
    assert!(named_in("```map\na/  x\n      b.rs  too deep\n```").is_err());
    assert!(named_in("```map\nREADME  not a module\n```").is_err());
    assert!(named_in("no map here").is_err());
}
