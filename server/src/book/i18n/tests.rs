//! The shipped catalogues against the English of this checkout.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn msgids_and_sources(catalog: &Catalog) -> BTreeSet<(String, String)> {
    catalog
        .messages()
        .map(|m| {
            (
                m.msgid().to_string(),
                m.source().split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect()
}

#[test]
fn the_template_in_po_is_the_english_of_today() {
    let fresh = extract::catalog(&root()).unwrap();
    let shipped = polib::po_file::parse(&template_path(&root())).unwrap();
    let (fresh, shipped) = (msgids_and_sources(&fresh), msgids_and_sources(&shipped));
    let new: Vec<_> = fresh
        .difference(&shipped)
        .map(|(m, s)| format!("{s}: {m:.80}"))
        .collect();
    let gone: Vec<_> = shipped
        .difference(&fresh)
        .map(|(m, s)| format!("{s}: {m:.80}"))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "po/messages.pot is stale: run `cargo run -p pipebook -- translations` and \
         `msgmerge --update po/zh-CN.po po/messages.pot`, then translate.\n\
         new or moved in the English ({}): {:#?}\nno longer in it ({}): {:#?}",
        new.len(),
        &new[..new.len().min(10)],
        gone.len(),
        &gone[..gone.len().min(10)]
    );
}

#[test]
fn every_edition_translates_all_of_the_english_and_nothing_is_fuzzy() {
    let template = extract::catalog(&root()).unwrap();
    for edition in EDITIONS {
        let coverage = coverage(&template, &load(&root(), &edition).unwrap());
        assert!(
            coverage.is_complete(),
            "{}: {} translated; older than the English (fuzzy) {}: {:#?}; \
             not translated {}: {:#?}; no longer used {}: {:#?}",
            edition.tag,
            coverage.translated,
            coverage.stale.len(),
            coverage.stale.iter().take(5).collect::<Vec<_>>(),
            coverage.untranslated.len(),
            coverage.untranslated.iter().take(5).collect::<Vec<_>>(),
            coverage.obsolete.len(),
            coverage.obsolete.iter().take(5).collect::<Vec<_>>(),
        );
    }
}

/// What a translation must carry over unchanged from its English: directives,
/// code, link targets, HTML tags.
fn kept_parts(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{#") {
        let Some(end) = rest[start..].find("}}") else {
            break;
        };
        parts.push(rest[start..start + end + 2].to_string());
        rest = &rest[start + end + 2..];
    }
    for (i, piece) in text.split('`').enumerate() {
        if i % 2 == 1 {
            parts.push(format!("`{piece}`"));
        }
    }
    let mut rest = text;
    while let Some(start) = rest.find("](") {
        let Some(end) = rest[start..].find(')') else {
            break;
        };
        parts.push(rest[start..start + end + 1].to_string());
        rest = &rest[start + end + 1..];
    }
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        let name: String = rest[start + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '/')
            .collect();
        if name
            .trim_start_matches('/')
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        {
            parts.push(format!("<{name}"));
        }
        rest = &rest[start + 1..];
    }
    // `{name}` placeholders of the cards' sentences, each as often as in the English.
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let name: String = rest[start + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && rest[start + 1 + name.len()..].starts_with('}') {
            parts.push(format!("{{{name}}}"));
        }
        rest = &rest[start + 1..];
    }
    parts.sort();
    parts
}

#[test]
fn every_translation_keeps_the_directives_code_links_tags_and_placeholders_of_its_english() {
    for edition in EDITIONS {
        let catalogue = load(&root(), &edition).unwrap();
        let mut broken = Vec::new();
        for message in catalogue.messages() {
            let Ok(msgstr) = message.msgstr() else {
                continue;
            };
            if msgstr.is_empty() || message.msgid().starts_with("```") {
                continue;
            }
            if kept_parts(message.msgid()) != kept_parts(msgstr) {
                broken.push(format!("{:.100} -> {:.100}", message.msgid(), msgstr));
            }
        }
        assert!(
            broken.is_empty(),
            "{}: {} translations changed what must stay: {:#?}",
            edition.tag,
            broken.len(),
            &broken[..broken.len().min(10)]
        );
    }
}

#[test]
fn the_fixed_terms_are_the_ones_the_translation_uses() {
    let terms = terms::all();
    assert!(terms.len() >= 10, "po/terms.tsv lists the fixed terms");
    let catalogue = load(&root(), &EDITIONS[0]).unwrap();
    let mut off = Vec::new();
    for terms::Term {
        english, chinese, ..
    } in terms.iter().filter(|t| t.checked)
    {
        for message in catalogue.messages() {
            let Ok(msgstr) = message.msgstr() else {
                continue;
            };
            if msgstr.is_empty() || message.flags().is_fuzzy() {
                continue;
            }
            if terms::prose_mentions(message.msgid(), english) && !msgstr.contains(chinese.as_str())
            {
                off.push(format!(
                    "{english} -> {chinese}: {:.80} -> {:.80}",
                    message.msgid(),
                    msgstr
                ));
            }
        }
    }
    assert!(
        off.is_empty(),
        "{} translations use another word for a fixed term: {:#?}",
        off.len(),
        &off[..off.len().min(15)]
    );
}
