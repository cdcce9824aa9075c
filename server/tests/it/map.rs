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

/// The types a source file defines, by name: `struct`, `enum`, `trait`, `union`
/// and a `type` at the file's top level (an associated `type Err` inside an
/// `impl` is the trait's name, not a new one), public or not.
fn types_defined(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let indented = line.starts_with(' ');
        let mut words = line.split_whitespace().peekable();
        if words.peek().is_some_and(|w| w.starts_with("pub")) {
            words.next();
        }
        let (Some(keyword), Some(name)) = (words.next(), words.next()) else {
            continue;
        };
        let is_type = matches!(keyword, "struct" | "enum" | "trait" | "union")
            || (keyword == "type" && !indented);
        if is_type {
            let name: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

#[test]
fn no_type_name_is_defined_twice_in_the_two_crates() {
    let mut files = BTreeSet::new();
    sources("bench/src/", ".rs", &mut files);
    sources("server/src/", ".rs", &mut files);
    let mut places: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for file in &files {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        for name in types_defined(&text) {
            places.entry(name).or_default().push(file.clone());
        }
    }
    let twice: Vec<String> = places
        .iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(name, files)| format!("{name} in {}", files.join(", ")))
        .collect();
    assert!(
        twice.is_empty(),
        "one name per thing: these type names are defined more than once \
         (give each a name that says which it is): {twice:#?}"
    );
}

#[test]
fn a_type_is_read_with_its_visibility_and_an_associated_type_is_not() {
    let text = "pub struct A<'a> {\npub(crate) enum B {\n    struct C;\ntrait D: Send {\n\
                type E = u8;\nimpl X for Y {\n    type Err = ();\n}\n// a struct in a comment\n";
    assert_eq!(types_defined(text), ["A", "B", "C", "D", "E"]);
}
