//! README's command-line section against the real binary: every subcommand
//! `pipebench --help` lists has a line there, and every flag a line passes is
//! one its subcommand's `--help` names, so the README neither leaves a command
//! out nor shows one that no longer parses.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::{pipebench, stderr, stdout};

/// The README's `pipebench` lines: each pipeline segment as (subcommand, flags).
fn readme_commands() -> Vec<(String, Vec<String>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut found = Vec::new();
    for line in text.lines() {
        // A comment after the command says what it does.
        let command = line.split(" # ").next().unwrap_or("");
        for segment in command.split('|') {
            let mut words = segment.split_whitespace();
            if words.next() != Some("pipebench") {
                continue;
            }
            let Some(sub) = words.next() else { continue };
            if sub.starts_with('-') || sub.starts_with('`') {
                continue;
            }
            let flags = words
                .filter(|w| w.starts_with("--"))
                .map(|w| {
                    w.split('=')
                        .next()
                        .unwrap()
                        .trim_end_matches('`')
                        .to_string()
                })
                .collect();
            found.push((sub.trim_end_matches('`').to_string(), flags));
        }
    }
    assert!(!found.is_empty(), "no pipebench line in {}", path.display());
    found
}

/// The subcommands `pipebench --help` lists (`help` aside).
fn listed_subcommands() -> BTreeSet<String> {
    let output = pipebench(&["--help"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let help = stdout(&output);
    let commands = help
        .split("Commands:")
        .nth(1)
        .expect("a Commands: section")
        .split("\n\n")
        .next()
        .unwrap();
    commands
        .lines()
        // A command's line starts two spaces in; its description's next lines, further.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_shows_every_subcommand_with_flags_it_takes() {
    let readme = readme_commands();
    let shown: BTreeSet<String> = readme.iter().map(|(sub, _)| sub.clone()).collect();
    let listed = listed_subcommands();
    for new in ["tune", "tool", "shared-pipe"] {
        assert!(
            listed.contains(new),
            "{new} is not a subcommand: {listed:?}"
        );
    }
    let missing: Vec<&String> = listed.difference(&shown).collect();
    assert!(missing.is_empty(), "README shows no line for {missing:?}");
    for (sub, flags) in &readme {
        let output = pipebench(&[sub.as_str(), "--help"]);
        assert!(
            output.status.success(),
            "README's `pipebench {sub}`: {}",
            stderr(&output)
        );
        let help = stdout(&output);
        for flag in flags {
            assert!(
                help.contains(flag.as_str()),
                "README passes {flag} to `pipebench {sub}`, whose --help does not name it"
            );
        }
    }
}
