//! The book's prose as a learner meets it: every chapter listed in
//! `book/src/SUMMARY.md`, measured on its main line (what remains once
//! `<details>` asides, code blocks, Mermaid, tables, directives, HTML comments,
//! headings and the `<small>` captions that cite a listing are set aside).
//!
//! Per chapter: mean sentence length at most 22 words, at most 5% of sentences
//! over 40 words, the opening (a `**Question:**` paragraph, then an
//! `**Answer:**` paragraph, right after the title) and the closing (a last
//! `## Summary` section of 3 to 5 bullets) in every chapter but the
//! appendices, and every glossary term used before the chapter that explains it
//! linked at its first use. The test prints a table of every chapter; run it
//! with `cargo test -p pipebook --test it prose:: -- --nocapture` to read it.

use std::path::PathBuf;

/// Longest mean sentence a chapter may have, in words.
const MAX_MEAN: f64 = 22.0;
/// A sentence longer than this many words is long.
const LONG: usize = 40;
/// Largest share of long sentences a chapter may have, in percent.
const MAX_LONG_SHARE: f64 = 5.0;

/// One chapter of SUMMARY.md, in reading order.
#[derive(Debug, PartialEq)]
struct Listed {
    file: String,
    /// An unnumbered chapter after the numbered ones (glossary, notebook):
    /// measured, but without the opening rule.
    appendix: bool,
}

/// The chapters SUMMARY.md lists, in reading order. A link line that is not a
/// list item and comes after a numbered chapter is a suffix chapter: an appendix.
fn listed(summary: &str) -> Vec<Listed> {
    let mut seen_numbered = false;
    let mut out = Vec::new();
    for line in summary.lines() {
        let trimmed = line.trim_start();
        let (numbered, rest) = match trimmed.strip_prefix("- ") {
            Some(rest) => (true, rest),
            None => (false, trimmed),
        };
        let Some(link) = links(rest).into_iter().next() else {
            continue;
        };
        if !rest.starts_with('[') || link.target.is_empty() {
            continue;
        }
        seen_numbered |= numbered;
        out.push(Listed {
            file: link.target,
            appendix: !numbered && seen_numbered,
        });
    }
    out
}

/// A Markdown link found in a paragraph: byte ranges of its text and target.
#[derive(Debug)]
struct Link {
    text: std::ops::Range<usize>,
    whole: std::ops::Range<usize>,
    target: String,
}

/// Every `[text](target)` of a paragraph (images included), outermost first.
fn links(text: &str) -> Vec<Link> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'[' {
            i += 1;
            continue;
        }
        // Find the matching ']' (link texts may hold brackets of their own).
        let (mut depth, mut j) = (0usize, i);
        while j < bytes.len() {
            match bytes[j] {
                b'[' => depth += 1,
                b']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        if j + 1 < bytes.len() && bytes[j + 1] == b'(' {
            if let Some(close) = text[j + 2..].find(')') {
                let end = j + 2 + close;
                found.push(Link {
                    text: i + 1..j,
                    whole: i..end + 1,
                    target: text[j + 2..end].trim().to_string(),
                });
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    found
}

/// A chapter split as a reader meets it: the main line's paragraphs (raw
/// Markdown, headings left out) and the words in its `<details>` asides.
struct Split {
    paragraphs: Vec<String>,
    aside_words: usize,
}

/// Removes `<!-- ... -->` comments.
fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// The list marker a line starts with (`- `, `* `, `1. `), if any: its length.
fn list_marker(line: &str) -> Option<usize> {
    if line.starts_with("- ") || line.starts_with("* ") {
        return Some(2);
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && line[digits..].starts_with(". ")).then_some(digits + 2)
}

/// Splits a chapter into its main line and its asides.
fn split(chapter: &str) -> Split {
    let text = without_comments(chapter);
    let (mut paragraphs, mut current, mut aside) = (Vec::new(), String::new(), String::new());
    let mut fence: Option<&str> = None;
    let mut details = 0usize;
    let mut caption = false;
    let flush = |current: &mut String, paragraphs: &mut Vec<String>| {
        if !current.trim().is_empty() {
            paragraphs.push(current.trim().to_string());
        }
        current.clear();
    };
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(open) = fence {
            if line.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if line.starts_with("```") || line.starts_with("~~~") {
            fence = Some(&line[..3]);
            flush(&mut current, &mut paragraphs);
            continue;
        }
        let opens = line.matches("<details").count();
        let closes = line.matches("</details>").count();
        if details > 0 || opens > 0 {
            details = (details + opens).saturating_sub(closes);
            aside.push_str(line);
            aside.push('\n');
            flush(&mut current, &mut paragraphs);
            continue;
        }
        // Blockquotes and admonitions read as prose; their markers do not.
        let line = line.trim_start_matches('>').trim();
        if line.is_empty()
            || line.starts_with('#')
            || line.starts_with('|')
            || line.starts_with("{{#")
            || line.starts_with("[!")
        {
            flush(&mut current, &mut paragraphs);
            continue;
        }
        // A listing's caption cites its source; it belongs with the listing.
        if caption || line.starts_with("<small>") {
            caption = !line.contains("</small>");
            continue;
        }
        let line = match list_marker(line) {
            Some(len) => {
                flush(&mut current, &mut paragraphs);
                &line[len..]
            }
            None => line,
        };
        current.push_str(line);
        current.push(' ');
    }
    flush(&mut current, &mut paragraphs);
    Split {
        paragraphs,
        aside_words: words(&plain(&aside)),
    }
}

/// A paragraph as plain words: each inline code span becomes one word, a link
/// its text, HTML tags and emphasis markers go.
fn plain(paragraph: &str) -> String {
    let mut out = String::new();
    let mut rest = paragraph;
    // Code spans first: their dots and brackets are not prose.
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].bytes().take_while(|&b| b == b'`').count();
        let fence = &rest[start..start + ticks];
        match rest[start + ticks..].find(fence) {
            Some(end) => {
                out.push_str("CODE");
                rest = &rest[start + ticks + end + ticks..];
            }
            None => {
                rest = &rest[start + ticks..];
            }
        }
    }
    out.push_str(rest);
    let mut text = String::new();
    let mut last = 0;
    for link in links(&out) {
        text.push_str(&out[last..link.whole.start]);
        if !out[..link.whole.start].ends_with('!') {
            text.push_str(&out[link.text.clone()]);
        } else {
            text.pop();
        }
        last = link.whole.end;
    }
    text.push_str(&out[last..]);
    let mut plain = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                plain.push(' ');
            }
            _ if in_tag => {}
            '*' => {}
            _ => plain.push(c),
        }
    }
    plain
}

/// How many words a text has: whitespace-separated tokens holding a letter or digit.
fn words(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

/// The word counts of a paragraph's sentences. A sentence ends at `.`, `?` or
/// `!` (closing quotes and brackets may follow) before whitespace, and at the
/// paragraph's end; a dot inside a number (3.7) ends nothing.
fn sentences(paragraph: &str) -> Vec<usize> {
    let text = plain(paragraph);
    let chars: Vec<char> = text.chars().collect();
    let (mut out, mut current) = (Vec::new(), String::new());
    let mut i = 0;
    while i < chars.len() {
        current.push(chars[i]);
        if matches!(chars[i], '.' | '?' | '!') {
            let mut j = i + 1;
            while j < chars.len() && matches!(chars[j], ')' | '"' | '\'' | '”' | '’') {
                current.push(chars[j]);
                j += 1;
            }
            if j >= chars.len() || chars[j].is_whitespace() {
                out.push(words(&current));
                current.clear();
            }
            i = j;
            continue;
        }
        i += 1;
    }
    out.push(words(&current));
    out.retain(|&n| n > 0);
    out
}

/// What the checks find in one chapter's main line.
#[derive(Debug)]
struct Measure {
    main_words: usize,
    aside_words: usize,
    sentences: usize,
    long: usize,
    /// Where the `**Answer:**` paragraph starts, as a share of the main line's
    /// words; `None` when the chapter does not open with Question and Answer.
    answer_at: Option<f64>,
}

impl Measure {
    fn mean(&self) -> f64 {
        self.main_words as f64 / self.sentences.max(1) as f64
    }
    fn long_share(&self) -> f64 {
        100.0 * self.long as f64 / self.sentences.max(1) as f64
    }
}

/// Measures a chapter's text.
fn measure(chapter: &str) -> Measure {
    let split = split(chapter);
    let mut m = Measure {
        main_words: 0,
        aside_words: split.aside_words,
        sentences: 0,
        long: 0,
        answer_at: None,
    };
    let opens = split.paragraphs.len() >= 2
        && split.paragraphs[0].starts_with("**Question:**")
        && split.paragraphs[1].starts_with("**Answer:**")
        && opening_follows_title(chapter);
    let mut answer_words = 0;
    for (i, paragraph) in split.paragraphs.iter().enumerate() {
        if i == 1 {
            answer_words = m.main_words;
        }
        for n in sentences(paragraph) {
            m.main_words += n;
            m.sentences += 1;
            m.long += usize::from(n > LONG);
        }
    }
    if opens {
        m.answer_at = Some(100.0 * answer_words as f64 / m.main_words.max(1) as f64);
    }
    m
}

/// Whether the first thing after the `# Title` line is the Question paragraph.
fn opening_follows_title(chapter: &str) -> bool {
    let mut lines = chapter.lines().skip_while(|l| l.trim().is_empty());
    let title = lines.next().unwrap_or("");
    let next = lines.find(|l| !l.trim().is_empty()).unwrap_or("");
    title.starts_with("# ") && next.starts_with("**Question:**")
}

/// How many top-level bullets the chapter's last `##` section holds, if that
/// section is `## Summary`.
fn summary_bullets(chapter: &str) -> Option<usize> {
    let mut fence = false;
    let mut last = None;
    for (i, line) in chapter.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        } else if !fence && line.starts_with("## ") {
            last = Some((i, line.trim() == "## Summary"));
        }
    }
    let (at, is_summary) = last?;
    is_summary.then(|| {
        chapter
            .lines()
            .skip(at + 1)
            .filter(|l| l.starts_with("- "))
            .count()
    })
}

/// One glossary entry: `- **term** (also: a, b): definition. [Title](chapter.md)`.
#[derive(Debug)]
struct Term {
    names: Vec<String>,
    chapter: String,
}

/// The glossary's entries, or the lines that do not follow the form.
fn glossary(text: &str) -> (Vec<Term>, Vec<String>) {
    let (mut terms, mut bad) = (Vec::new(), Vec::new());
    for line in text.lines().filter(|l| l.starts_with("- ")) {
        let entry = (|| {
            let rest = line.strip_prefix("- **")?;
            let (term, rest) = rest.split_once("**")?;
            let mut names = vec![term.trim().to_string()];
            let rest = match rest.trim_start().strip_prefix("(also:") {
                Some(aliases) => {
                    let (aliases, rest) = aliases.split_once(')')?;
                    names.extend(aliases.split(',').map(|a| a.trim().to_string()));
                    rest
                }
                None => rest,
            };
            let definition = rest.strip_prefix(": ")?;
            let link = links(definition).pop()?;
            if !definition.trim_end().ends_with(')')
                || definition[..link.whole.start].trim().is_empty()
            {
                return None;
            }
            let chapter = link.target.split('#').next()?.to_string();
            Some(Term { names, chapter })
        })();
        match entry {
            Some(term) if term.names.iter().all(|n| !n.is_empty()) => terms.push(term),
            _ => bad.push(line.to_string()),
        }
    }
    (terms, bad)
}

/// Whether the byte before `at` and the byte at `end` leave `text[at..end]` a
/// whole word: no letter, digit, `_` or `-` touches it.
fn whole_word(text: &str, at: usize, end: usize) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let bytes = text.as_bytes();
    (at == 0 || !word(bytes[at - 1])) && (end >= bytes.len() || !word(bytes[end]))
}

/// The first use of a term (any of its names, as a whole word, in any case) on
/// the main line, outside link targets: whether it sits in the text of a link
/// to the glossary or to `chapter`, and the sentence around it. `None` if unused.
fn first_use(paragraphs: &[String], names: &[String], chapter: &str) -> Option<(bool, String)> {
    for paragraph in paragraphs {
        let found = links(paragraph);
        // Link targets are not prose: blank them before searching.
        let mut lower = paragraph.to_lowercase().into_bytes();
        for link in &found {
            for b in &mut lower[link.text.end..link.whole.end] {
                *b = b' ';
            }
        }
        let lower = String::from_utf8_lossy(&lower).into_owned();
        let hit = names
            .iter()
            .filter_map(|name| {
                let name = name.to_lowercase();
                let text = code_spans_naming(&lower, &name);
                text.match_indices(&name)
                    .find(|(at, _)| whole_word(&text, *at, at + name.len()))
                    .map(|(at, _)| at)
            })
            .min();
        if let Some(at) = hit {
            let linked = found.iter().any(|l| {
                l.text.contains(&at) && {
                    let target = l.target.split('#').next().unwrap_or("");
                    target == "glossary.md" || target == chapter
                }
            });
            let from = paragraph[..at].rfind(". ").map_or(0, |p| p + 2);
            let context: String = paragraph[from..].chars().take(90).collect();
            return Some((linked, context));
        }
    }
    None
}

/// `text` with every inline code span blanked, except a span that is `name`
/// itself (`splice`, `splice(2)`, `splice()`): a path such as `fs/splice.c` or
/// a flag such as `--splice` does not use the term. Byte offsets are kept.
fn code_spans_naming(text: &str, name: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let mut from = 0;
    while let Some(open) = text[from..].find('`').map(|i| i + from) {
        let Some(close) = text[open + 1..].find('`').map(|i| i + open + 1) else {
            break;
        };
        let inner = &text[open + 1..close];
        let bare = inner
            .strip_suffix("(2)")
            .or_else(|| inner.strip_suffix("()"))
            .unwrap_or(inner);
        if bare != name {
            for b in &mut out[open + 1..close] {
                *b = b' ';
            }
        }
        from = close + 1;
    }
    String::from_utf8(out).unwrap_or_default()
}

fn book_src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../book/src")
}

/// Measures every chapter of the real book: prints the table, returns each
/// broken rule as "chapter: rule".
fn check_book() -> Vec<String> {
    let src = book_src();
    let read = |file: &str| std::fs::read_to_string(src.join(file));
    let chapters = listed(&read("SUMMARY.md").expect("book/src/SUMMARY.md"));
    let mut failures = Vec::new();
    let glossary_text = read("glossary.md").unwrap_or_default();
    let (terms, bad) = glossary(&glossary_text);
    if !chapters.iter().any(|c| c.file == "glossary.md") {
        failures.push("SUMMARY.md: the glossary (glossary.md) is not listed".to_string());
    }
    for line in bad {
        failures.push(format!(
            "glossary.md: not in the form `- **term** (also: a, b): definition. [Title](chapter.md)`: {line}"
        ));
    }
    let mut names = std::collections::BTreeMap::new();
    for term in &terms {
        for name in &term.names {
            if let Some(other) = names.insert(name.to_lowercase(), &term.names[0]) {
                failures.push(format!(
                    "glossary.md: `{name}` is defined twice ({other}, {})",
                    term.names[0]
                ));
            }
        }
        if !chapters.iter().any(|c| c.file == term.chapter) {
            failures.push(format!(
                "glossary.md: `{}` is explained in {}, which SUMMARY.md does not list",
                term.names[0], term.chapter
            ));
        }
    }
    println!(
        "{:<28} {:>6} {:>6} {:>5} {:>6} {:>7}",
        "chapter", "main", "aside", "mean", "long%", "answer%"
    );
    let (mut main_total, mut aside_total) = (0, 0);
    for (index, chapter) in chapters.iter().enumerate() {
        let name = &chapter.file;
        let Ok(text) = read(name) else {
            failures.push(format!("{name}: listed in SUMMARY.md but missing"));
            continue;
        };
        let m = measure(&text);
        main_total += m.main_words;
        aside_total += m.aside_words;
        println!(
            "{:<28} {:>6} {:>6} {:>5.1} {:>6.1} {:>7}",
            name,
            m.main_words,
            m.aside_words,
            m.mean(),
            m.long_share(),
            m.answer_at
                .map_or("none".to_string(), |a| format!("{a:.0}")),
        );
        if m.mean() > MAX_MEAN {
            failures.push(format!(
                "{name}: mean sentence {:.1} words, over {MAX_MEAN}",
                m.mean()
            ));
        }
        if m.long_share() > MAX_LONG_SHARE {
            failures.push(format!(
                "{name}: {:.1}% of sentences over {LONG} words, over {MAX_LONG_SHARE}%",
                m.long_share()
            ));
        }
        if !chapter.appendix && m.answer_at.is_none() {
            failures.push(format!(
                "{name}: no opening (a **Question:** then an **Answer:** paragraph right after the title)"
            ));
        }
        if !chapter.appendix && !summary_bullets(&text).is_some_and(|n| (3..=5).contains(&n)) {
            failures.push(format!(
                "{name}: no closing `## Summary` of 3 to 5 bullets as its last section"
            ));
        }
        let paragraphs = split(&text).paragraphs;
        for term in &terms {
            let explains = chapters.iter().position(|c| c.file == term.chapter);
            if explains.is_none_or(|e| e <= index) {
                continue;
            }
            if let Some((false, context)) = first_use(&paragraphs, &term.names, &term.chapter) {
                failures.push(format!(
                    "{name}: uses `{}` before {} explains it, without a link at its first use (\"{context}\")",
                    term.names[0], term.chapter
                ));
            }
        }
    }
    println!("{:<28} {main_total:>6} {aside_total:>6}", "total");
    failures
}

#[test]
fn every_chapter_reads_plainly_opens_with_its_answer_closes_with_a_summary_and_links_terms_first() {
    let failures = check_book();
    assert!(
        failures.is_empty(),
        "{} rule(s) broken:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn sentences_end_at_stops_not_at_dots_in_numbers_or_code() {
    assert_eq!(
        sentences("It ran at 3.7 GiB/s. Then `a.b()` came? Yes! (Really.) End"),
        vec![5, 3, 1, 1, 1]
    );
    assert_eq!(
        sentences("A [link to a page](x.md#a.b) counts its text."),
        vec![8]
    );
}

#[test]
fn asides_code_tables_and_directives_are_not_the_main_line() {
    let chapter = "# T\n\n**Question:** Why?\n\n**Answer:** Because.\n\n\
        <details><summary>More</summary>\n\nfour words in here\n\n</details>\n\n\
        ```c\nint x = 1. y;\n```\n\n| a. b | c |\n\n{{#run write-read}}\n\n<!-- hidden. words -->\n\
        ## Heading words\n\n- One item.\n- Two items here.\n";
    let m = measure(chapter);
    assert_eq!((m.main_words, m.sentences), (9, 4), "{m:?}");
    assert!(m.aside_words >= 4, "{m:?}");
    assert!(m.answer_at.is_some());
}

#[test]
fn the_summary_must_be_the_last_section() {
    let closed =
        "# T\n\n## Try\n\n- a\n\n## Summary\n\n- one\n- two\n- three\n  more\n\nNext: [x](x.md).\n";
    assert_eq!(summary_bullets(closed), Some(3));
    let late = "# T\n\n## Summary\n\n- one\n\n## Try this\n\n- a\n";
    assert_eq!(summary_bullets(late), None);
    let code = "# T\n\n## Summary\n\n- a\n\n```sh\n## not a heading\n```\n";
    assert_eq!(summary_bullets(code), Some(1));
}

#[test]
fn a_long_sentence_and_a_missing_opening_are_seen() {
    let long = vec!["word"; 41].join(" ");
    let m = measure(&format!("# T\n\nSome text first.\n\n{long}.\n"));
    assert_eq!((m.sentences, m.long), (2, 1));
    assert!(m.answer_at.is_none());
}

#[test]
fn a_term_counts_as_used_only_as_a_whole_word_outside_link_targets() {
    let names = vec!["splice".to_string(), "page cache".to_string()];
    let paragraphs = vec![
        "See [vmsplice](vmsplice.md) and `--splice`, `fs/splice.c`, SPLICE_F_MOVE, vmsplice-splice."
            .to_string(),
        "Then [the Page Cache](glossary.md) and splice.".to_string(),
    ];
    assert_eq!(
        first_use(&paragraphs, &names, "splice.md").map(|u| u.0),
        Some(true)
    );
    let unlinked = vec!["Data goes to the page cache.".to_string()];
    assert_eq!(
        first_use(&unlinked, &names, "splice.md").map(|u| u.0),
        Some(false)
    );
}

#[test]
fn the_summary_marks_chapters_after_the_numbered_ones_as_appendices() {
    let summary = "# Summary\n\n[Intro](intro.md)\n\n- [One](one.md)\n  - [Sub](sub.md)\n\n# Part\n\n- [Two](two.md)\n\n---\n\n[Glossary](glossary.md)\n";
    let files: Vec<_> = listed(summary)
        .into_iter()
        .map(|l| (l.file, l.appendix))
        .collect();
    assert_eq!(
        files,
        vec![
            ("intro.md".to_string(), false),
            ("one.md".to_string(), false),
            ("sub.md".to_string(), false),
            ("two.md".to_string(), false),
            ("glossary.md".to_string(), true),
        ]
    );
}

#[test]
fn glossary_lines_outside_the_form_are_named() {
    let (terms, bad) = glossary(
        "Intro line.\n\n- **TLB** (also: translation lookaside buffer): a cache of translations. [Paging](paging.md)\n- **folio**: no link here.\n",
    );
    assert_eq!(terms.len(), 1);
    assert_eq!(terms[0].names, vec!["TLB", "translation lookaside buffer"]);
    assert_eq!(terms[0].chapter, "paging.md");
    assert_eq!(bad.len(), 1);
}
