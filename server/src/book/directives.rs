//! The `{{#run STEP-ID}}`, `{{#sweep STEP-ID PARAM}}`, `{{#lab LAB-ID}}`,
//! `{{#ipc MECHANISM}}`, `{{#ipc-matrix}}`, `{{#pages STEP [STEP2]}}`,
//! `{{#walk [ADDRESS]}}`, `{{#results}}`, `{{#system}}`, `{{#latency MECHANISM}}` and
//! `{{#latency-matrix}}` directives, `{{#kernel PROBE}}` (one line: what this
//! kernel does, measured), and past the article `{{#tune STEP-ID}}`,
//! `{{#tool}}` and `{{#shared-pipe}}`.
//!
//! Each becomes a placeholder `<div>` that the runner widget (book/theme) fills in
//! when the page is served by pipebook; the `{{#run}}` one also carries a static
//! fallback, so the same book read as a plain static site still says what the step
//! is and how to run it.

use pipebench::engine::sweep::SweepParam;
use pipebench::ipc::{self, MechanismInfo};
use pipebench::machine::behaviour::ProbeId;
use pipebench::size::ByteSize;
use pipebench::steps::catalog::{self, Step};

use super::error::BookError;
use super::i18n::Words;
use super::markdown::code_ranges;
use crate::html::escape;
use texts::{
    AA_AGAIN, AA_HEAD, ARTICLE_MEASURED, BLOCKING, BUSY, COPIES, IPC_MATRIX_HEAD, IPC_START,
    KERNEL_LINE, LAB_HEAD, LATENCY_MATRIX_HEAD, NO_SURVEY, ON_THE_COMMAND_LINE, PAGES_HEAD,
    RUN_HEAD, SAME_CURVE, SAME_TABLE, SECOND_SURVEY, SHARED_HEAD, START_HINT, SURVEY_FIGURE,
    SURVEY_SOURCE, SWEEP_HEAD, TOOL_HEAD, TUNE_HEAD, WALK_HEAD, WALK_TEXT,
};

pub(crate) mod texts;

/// `code` as the cards write a command.
fn code(command: &str) -> String {
    format!("<code>{command}</code>")
}

/// A directive found in a chapter.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Directive<'a> {
    Run(&'a str),
    Sweep(&'a str, SweepParam),
    Lab(&'a str),
    Ipc(&'a str),
    IpcMatrix,
    Results,
    System,
    /// One or two steps' writer buffers, each `STEP`, `STEP:touched` or `STEP:untouched`.
    Pages(Vec<PagesSpec<'a>>),
    /// The page-table walk, starting from an address (the article's by default).
    Walk(Option<u64>),
    /// One latency lab mechanism's card.
    Latency(&'a str),
    /// Every latency lab mechanism at one size.
    LatencyMatrix,
    /// The tuning card of a step.
    Tune(&'a str),
    /// The tool card.
    Tool,
    /// Many writers and readers on one pipe.
    SharedPipe,
    /// Two steps head to head (the compare card), A then B.
    Compare(&'a str, &'a str),
    /// One line: what this kernel does where the chapter depends on it.
    Kernel(ProbeId),
    /// One step against itself, many times: the false claims counted (the A/A card).
    SelfCompare(&'a str),
    /// The fixed English-Chinese term pairs (`po/terms.tsv`) as a table.
    Terms,
}

/// One panel of a `{{#pages}}` directive.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PagesSpec<'a> {
    step: &'a str,
    /// `Some(false)` for `:untouched`, `Some(true)` for `:touched`.
    touch: Option<bool>,
}

impl PagesSpec<'_> {
    fn text(&self) -> String {
        match self.touch {
            None => self.step.to_string(),
            Some(true) => format!("{}:touched", self.step),
            Some(false) => format!("{}:untouched", self.step),
        }
    }
}

/// The default address of `{{#walk}}`: the article's example.
const ARTICLE_ADDRESS: u64 = 0x0000_f270_5af9_53c0;

/// Replaces every directive outside code in `content`. `chapter` names the file in
/// error messages.
#[cfg(test)]
pub(crate) fn expand(content: &str, chapter: &str) -> Result<String, BookError> {
    expand_in(content, chapter, &Words::default())
}

/// [`expand`], the cards' text in an edition's `words`.
pub(crate) fn expand_in(content: &str, chapter: &str, words: &Words) -> Result<String, BookError> {
    let code = code_ranges(content);
    let in_code = |at: usize| code.iter().any(|r| r.contains(&at));
    let mut out = String::with_capacity(content.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = content[search..].find("{{#") {
        let start = search + found;
        search = start + 3;
        if in_code(start) {
            continue;
        }
        let Some(close) = content[start..].find("}}") else {
            break;
        };
        let end = start + close + 2;
        let text = &content[start..end];
        let Some(directive) = parse(text).map_err(|reason| BookError::BadDirective {
            chapter: chapter.to_string(),
            text: text.to_string(),
            reason,
        })?
        else {
            // Someone else's directive (e.g. `{{#include}}` left escaped): not ours.
            continue;
        };
        out.push_str(&content[copied..start]);
        out.push_str(&render(&directive, chapter, words)?);
        copied = end;
        search = end;
    }
    out.push_str(&content[copied..]);
    Ok(out)
}

/// Reads `{{#name args}}`; `Ok(None)` for directives that belong to someone else.
fn parse(text: &str) -> Result<Option<Directive<'_>>, String> {
    let inner = text
        .strip_prefix("{{#")
        .and_then(|t| t.strip_suffix("}}"))
        .unwrap_or_default();
    let (name, args) = inner
        .split_once(char::is_whitespace)
        .map_or((inner, ""), |(n, a)| (n, a.trim()));
    match name {
        "run" => parse_run(args).map(Some),
        "sweep" => parse_sweep(args).map(Some),
        "lab" => one_id(
            args,
            Directive::Lab,
            "one lab id per card: write `{{#lab LAB-ID}}`",
        ),
        "ipc" => one_id(
            args,
            Directive::Ipc,
            "one mechanism per widget: write `{{#ipc MECHANISM}}`",
        ),
        "pages" => parse_pages(args).map(Some),
        "walk" => match args {
            "" => Ok(Some(Directive::Walk(None))),
            text => {
                let address =
                    pipebench::memory::paging::parse_address(text).map_err(|e| e.to_string())?;
                Ok(Some(Directive::Walk(Some(address))))
            }
        },
        "latency" => one_id(
            args,
            Directive::Latency,
            "one mechanism per card: write `{{#latency MECHANISM}}`",
        ),
        "latency-matrix" if !args.is_empty() => Err(format!(
            "`{{{{#latency-matrix}}}}` takes no arguments, found `{args}`"
        )),
        "latency-matrix" => Ok(Some(Directive::LatencyMatrix)),
        "tune" => one_id(
            args,
            Directive::Tune,
            "one step per tuning card: write `{{#tune STEP-ID}}`",
        ),
        "tool" | "shared-pipe" if !args.is_empty() => Err(format!(
            "`{{{{#{name}}}}}` takes no arguments, found `{args}`"
        )),
        "tool" => Ok(Some(Directive::Tool)),
        "shared-pipe" => Ok(Some(Directive::SharedPipe)),
        "compare" => {
            let mut words = args.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some(a), Some(b), None) => Ok(Some(Directive::Compare(a, b))),
                _ => Err("two steps to compare: write `{{#compare STEP-A STEP-B}}`".into()),
            }
        }
        "kernel" => parse_kernel(args).map(Some),
        "aa" => one_id(
            args,
            Directive::SelfCompare,
            "one step to set against itself: write `{{#aa STEP-ID}}`",
        ),
        "results" | "system" | "ipc-matrix" if !args.is_empty() => Err(format!(
            "`{{{{#{name}}}}}` takes no arguments, found `{args}`"
        )),
        "results" => Ok(Some(Directive::Results)),
        "system" => Ok(Some(Directive::System)),
        "terms" => Ok(Some(Directive::Terms)),
        "ipc-matrix" => Ok(Some(Directive::IpcMatrix)),
        _ => Ok(None),
    }
}

/// The directive `directive` makes of `args` when it is exactly one word, or
/// `usage` as the reason it is not.
fn one_id<'a>(
    args: &'a str,
    directive: fn(&'a str) -> Directive<'a>,
    usage: &str,
) -> Result<Option<Directive<'a>>, String> {
    let mut words = args.split_whitespace();
    match (words.next(), words.next()) {
        (Some(id), None) => Ok(Some(directive(id))),
        _ => Err(usage.to_string()),
    }
}

/// `{{#run STEP-ID}}`'s arguments: none and more than one say different things.
fn parse_run(args: &str) -> Result<Directive<'_>, String> {
    let mut words = args.split_whitespace();
    match (words.next(), words.next()) {
        (Some(id), None) => Ok(Directive::Run(id)),
        (None, _) => Err("no step id: write `{{#run STEP-ID}}`".into()),
        (Some(_), Some(_)) => Err("one step id per widget: write `{{#run STEP-ID}}`".into()),
    }
}

/// `{{#sweep STEP-ID PARAM}}`'s arguments.
fn parse_sweep(args: &str) -> Result<Directive<'_>, String> {
    let usage = "write `{{#sweep STEP-ID PARAM}}` with PARAM pipe_size or buf_size";
    let mut words = args.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some(id), Some(param), None) => {
            let param = param
                .parse::<SweepParam>()
                .map_err(|e| format!("{e}: {usage}"))?;
            Ok(Directive::Sweep(id, param))
        }
        _ => Err(format!("a sweep names one step and one parameter: {usage}")),
    }
}

/// `{{#pages STEP [STEP2]}}`'s arguments, each step with its optional `:touched`.
fn parse_pages(args: &str) -> Result<Directive<'_>, String> {
    let usage = "write `{{#pages STEP}}` or `{{#pages STEP STEP2}}`, each STEP optionally ending in :touched or :untouched";
    let specs = args
        .split_whitespace()
        .map(|word| {
            let (step, touch) = match word.split_once(':') {
                None => (word, None),
                Some((step, "touched")) => (step, Some(true)),
                Some((step, "untouched")) => (step, Some(false)),
                Some((_, other)) => {
                    return Err(format!(
                        "`:{other}` is neither :touched nor :untouched: {usage}"
                    ))
                }
            };
            Ok(PagesSpec { step, touch })
        })
        .collect::<Result<Vec<_>, String>>()?;
    match specs.len() {
        1 | 2 => Ok(Directive::Pages(specs)),
        n => Err(format!("{n} steps: {usage}")),
    }
}

/// `{{#kernel PROBE}}`'s argument: one of the probes.
fn parse_kernel(args: &str) -> Result<Directive<'static>, String> {
    let mut words = args.split_whitespace();
    match (words.next().and_then(ProbeId::parse), words.next()) {
        (Some(id), None) => Ok(Directive::Kernel(id)),
        _ => Err(format!(
            "one behaviour per line: write `{{{{#kernel PROBE}}}}` with PROBE one of {}",
            ProbeId::ALL.map(ProbeId::as_str).join(", ")
        )),
    }
}

fn render(directive: &Directive<'_>, chapter: &str, words: &Words) -> Result<String, BookError> {
    match directive {
        Directive::Results => Ok(r#"<div class="pipebook-results"></div>"#.into()),
        Directive::System => Ok(r#"<div class="pipebook-system"></div>"#.into()),
        Directive::Terms => Ok(super::i18n::terms::table()),
        Directive::Kernel(id) => Ok(kernel_line(*id, words)),
        Directive::Pages(specs) => {
            for spec in specs {
                known_step(spec.step, chapter)?;
            }
            Ok(pages_widget(specs, words))
        }
        Directive::Walk(address) => Ok(walk_widget(address.unwrap_or(ARTICLE_ADDRESS), words)),
        Directive::Run(id) => Ok(run_widget(&known_step(id, chapter)?, words)),
        Directive::Lab(id) => Ok(lab_widget(known_lab(id, chapter)?, words)),
        Directive::Ipc(id) => {
            let mechanism = ipc::find(id).ok_or_else(|| BookError::UnknownMechanism {
                chapter: chapter.to_string(),
                id: id.to_string(),
                known: ipc::ids().join(", "),
            })?;
            Ok(ipc_widget(&mechanism, words))
        }
        Directive::IpcMatrix => Ok(ipc_matrix_widget(words)),
        Directive::Latency(id) => {
            let mechanism = known_latency_mechanism(id, chapter)?;
            Ok(latency_widget(&mechanism.info(), words))
        }
        Directive::LatencyMatrix => Ok(latency_matrix_widget(words)),
        Directive::Tune(id) => Ok(tune_widget(&known_step(id, chapter)?, words)),
        Directive::Tool => Ok(tool_widget(words)),
        Directive::SharedPipe => Ok(shared_pipe_widget(words)),
        Directive::Compare(a, b) => {
            known_step(a, chapter)?;
            known_step(b, chapter)?;
            // Step ids are catalog ids (letters, digits, dashes): safe in an attribute.
            Ok(format!(
                r#"<div class="pipebook-compare" data-a="{a}" data-b="{b}"></div>"#
            ))
        }
        Directive::SelfCompare(id) => {
            known_step(id, chapter)?;
            Ok(self_compare_widget(id, words))
        }
        Directive::Sweep(id, param) => Ok(sweep_widget(&known_step(id, chapter)?, *param, words)),
    }
}

/// The lab `id` of `labs.json`, or why a chapter cannot name it.
fn known_lab<'a>(id: &str, chapter: &str) -> Result<&'a crate::labs::defs::Lab, BookError> {
    crate::labs::defs::labs()
        .find(id)
        .ok_or_else(|| BookError::BadDirective {
            chapter: chapter.to_string(),
            text: format!("{{{{#lab {id}}}}}"),
            reason: format!(
                "unknown lab `{id}`: the labs (book/labs/labs.json) are {}",
                crate::labs::defs::labs().ids()
            ),
        })
}

/// The latency mechanism `id`, or why a chapter cannot name it.
fn known_latency_mechanism(
    id: &str,
    chapter: &str,
) -> Result<pipebench::latency::LatencyMechanism, BookError> {
    pipebench::latency::LatencyMechanism::parse(id).map_err(|_| BookError::UnknownMechanism {
        chapter: chapter.to_string(),
        id: id.to_string(),
        known: pipebench::latency::LatencyMechanism::ALL
            .iter()
            .map(|m| m.id())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// A card past the article as a page without the runner shows it: `open` (its
/// `<div>` with the attributes the page reads), its heading, how to start the
/// runner, and what to run instead (`instead`).
fn hinted_card(open: &str, head: &str, instead: &str, words: &Words) -> String {
    format!(
        r#"{open}<p class="pipebook-run-static"><strong>{head}</strong> {} {instead}</p></div>"#,
        words.t(START_HINT),
    )
}

/// The tuning card of `step`, its budget's default and bounds as the server's.
fn tune_widget(step: &Step, words: &Words) -> String {
    // The budget's default and bounds are the server's, written once.
    use crate::jobs::tune::{DEFAULT_TUNE_BUDGET, MAX_TUNE_BUDGET, MIN_TUNE_BUDGET};
    let head = words.fill(TUNE_HEAD, &[("title", escape(words.t(step.title)))]);
    let command = words.fill(
        ON_THE_COMMAND_LINE,
        &[(
            "command",
            code(&format!("pipebench tune {}", escape(step.id))),
        )],
    );
    let open = format!(
        r#"<div class="pipebook-tune" data-step="{}" data-budget="{DEFAULT_TUNE_BUDGET}" data-budget-min="{MIN_TUNE_BUDGET}" data-budget-max="{MAX_TUNE_BUDGET}">"#,
        escape(step.id),
    );
    hinted_card(&open, &head, &command, words)
}

/// The card that measures a program the reader pipes through.
fn tool_widget(words: &Words) -> String {
    let command = code("pipebench tool cat");
    hinted_card(
        r#"<div class="pipebook-tool">"#,
        words.t(TOOL_HEAD),
        &words.fill(ON_THE_COMMAND_LINE, &[("command", command)]),
        words,
    )
}

/// The card of one pipe shared by many writers and readers.
fn shared_pipe_widget(words: &Words) -> String {
    let command = code("pipebench shared-pipe --writers 1,2,4 --readers 1,2 --msg-size 4KiB,64KiB");
    hinted_card(
        r#"<div class="pipebook-shared-pipe">"#,
        words.t(SHARED_HEAD),
        &words.fill(ON_THE_COMMAND_LINE, &[("command", command)]),
        words,
    )
}

/// The card that sets step `id` against itself.
fn self_compare_widget(id: &str, words: &Words) -> String {
    let command = code(&format!("pipebench compare {id} {id} --pairs 6"));
    hinted_card(
        // Step ids are catalog ids (letters, digits, dashes): safe in an attribute.
        &format!(r#"<div class="pipebook-aa" data-step="{id}">"#),
        &words.fill(AA_HEAD, &[("id", id.to_string())]),
        &words.fill(AA_AGAIN, &[("command", command)]),
        words,
    )
}

/// The placeholder of `{{#kernel PROBE}}`: the page fills it from
/// `/api/system`'s `behaviour`; read without the runner, it says what it would show.
fn kernel_line(id: ProbeId, words: &Words) -> String {
    let probe = id.as_str();
    let text = words.fill(
        KERNEL_LINE,
        &[
            ("command", code("pipebench system")),
            ("probe", code(probe)),
        ],
    );
    format!(
        r#"<div class="pipebook-kernel" data-probe="{probe}"><p class="pipebook-kernel-text">{text}</p></div>"#
    )
}

fn known_step(id: &str, chapter: &str) -> Result<Step, BookError> {
    catalog::find(id).ok_or_else(|| BookError::UnknownStep {
        chapter: chapter.to_string(),
        id: id.to_string(),
        known: catalog::ids().join(", "),
    })
}

/// The page inspector's HTML contract: `data-specs` lists the panels.
fn pages_widget(specs: &[PagesSpec<'_>], words: &Words) -> String {
    let list: Vec<String> = specs.iter().map(PagesSpec::text).collect();
    let commands: Vec<String> = specs
        .iter()
        .map(|s| {
            let flag = match s.touch {
                None => "",
                Some(true) => " --touch",
                Some(false) => " --dont-touch-pages",
            };
            format!(
                "<code>pipebench pages --step {}{flag}</code>",
                escape(s.step)
            )
        })
        .collect();
    format!(
        r#"<div class="pipebook-pages" data-specs="{}"><p class="pipebook-run-static"><strong>{}</strong> {} {}</p></div>"#,
        escape(&list.join(" ")),
        words.t(PAGES_HEAD),
        words.t(START_HINT),
        words.fill(ON_THE_COMMAND_LINE, &[("command", commands.join(" / "))]),
    )
}

/// The walk's HTML contract: drawn by the page from `data-address`, runner or not.
fn walk_widget(address: u64, words: &Words) -> String {
    let text = words.fill(
        WALK_TEXT,
        &[(
            "command",
            code(&format!("pipebench pages --address {address:#018x}")),
        )],
    );
    format!(
        r#"<div class="pipebook-walk" data-address="{address:#018x}"><p class="pipebook-run-static"><strong>{}</strong> {text}</p></div>"#,
        words.t(WALK_HEAD)
    )
}

/// The lab card's HTML contract: the lab's definition travels with the page
/// (the page judges its checks from it), with a static fallback that says what
/// the lab is and how to start the runner.
fn lab_widget(lab: &crate::labs::defs::Lab, words: &Words) -> String {
    let def = words.lab(lab);
    format!(
        r#"<div class="pipebook-lab" data-lab="{}" data-def="{}"><p class="pipebook-run-static"><strong>{}</strong> {} {}</p></div>"#,
        escape(&lab.id),
        escape(&def),
        words.fill(LAB_HEAD, &[("title", escape(words.t(&lab.title)))]),
        escape(words.t(&lab.goal)),
        words.t(START_HINT),
    )
}

/// Where the figure on `id`'s card comes from.
fn survey_source(id: &str) -> &'static str {
    SECOND_SURVEY
        .iter()
        .find(|(m, _)| *m == id)
        .map_or(SURVEY_SOURCE, |(_, source)| source)
}

/// An IPC mechanism's card, on one line like [`run_widget`]'s. The static text
/// says what the mechanism is, its copies, and the survey's figure with its
/// source; the page adds the button and the measurement.
fn ipc_widget(mechanism: &MechanismInfo, words: &Words) -> String {
    let title = words.t(mechanism.title);
    let mut attrs = format!(
        r#"class="pipebook-ipc" data-mechanism="{}" data-title="{}""#,
        escape(mechanism.id),
        escape(title),
    );
    let mut text = format!("<strong>{}.</strong> ", escape(title));
    if let Some(copies) = mechanism.copies {
        attrs.push_str(&format!(r#" data-copies="{copies}""#));
        text.push_str(&words.fill(
            COPIES,
            &[
                ("copies", copies.to_string()),
                ("path", escape(words.t(mechanism.copy_path))),
            ],
        ));
        text.push(' ');
    }
    match mechanism.survey {
        Some(figure) => {
            let source = words.t(survey_source(mechanism.id));
            attrs.push_str(&format!(
                r#" data-survey-ms="{}" data-survey-bytes="{}" data-survey-source="{}""#,
                figure.ms,
                figure.bytes,
                escape(source)
            ));
            text.push_str(&words.fill(
                SURVEY_FIGURE,
                &[
                    ("ms", figure.ms.to_string()),
                    ("size", ByteSize(figure.bytes).to_string()),
                    ("source", escape(source)),
                ],
            ));
            text.push(' ');
        }
        None => {
            text.push_str(words.t(NO_SURVEY));
            text.push(' ');
        }
    }
    text.push_str(&words.fill(
        IPC_START,
        &[(
            "command",
            code(&format!("pipebench ipc {}", escape(mechanism.id))),
        )],
    ));
    format!(r#"<div {attrs}><p class="pipebook-run-static">{text}</p></div>"#)
}

/// The modes a latency mechanism has, space-separated (`blocking busy`).
fn latency_modes(info: &pipebench::latency::LatencyMechanismInfo) -> String {
    [("blocking", info.blocking), ("busy", info.busy)]
        .iter()
        .filter(|(_, how)| how.is_some())
        .map(|(mode, _)| *mode)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A latency lab mechanism's card: its id, title and modes; the static text says
/// how each end waits and how to run it.
fn latency_widget(info: &pipebench::latency::LatencyMechanismInfo, words: &Words) -> String {
    let title = words.t(info.title);
    let mut text = format!("<strong>{}.</strong> ", escape(title));
    if let Some(how) = info.blocking {
        text.push_str(&words.fill(BLOCKING, &[("how", escape(words.t(how)))]));
        text.push(' ');
    }
    if let Some(how) = info.busy {
        text.push_str(&words.fill(BUSY, &[("how", escape(words.t(how)))]));
        text.push(' ');
    }
    format!(
        r#"<div class="pipebook-latency" data-mechanism="{}" data-title="{}" data-modes="{}"><p class="pipebook-run-static">{text}{} {}</p></div>"#,
        escape(info.id),
        escape(title),
        latency_modes(info),
        words.t(START_HINT),
        words.fill(
            ON_THE_COMMAND_LINE,
            &[(
                "command",
                code(&format!("pipebench latency {}", escape(info.id)))
            )]
        ),
    )
}

/// The latency matrix card: every mechanism with its modes, as data for the page.
fn latency_matrix_widget(words: &Words) -> String {
    let list: Vec<serde_json::Value> = pipebench::latency::mechanisms()
        .iter()
        .map(|m| {
            serde_json::json!({
                "id": m.id,
                "modes": latency_modes(m).split(' ').collect::<Vec<_>>(),
            })
        })
        .collect();
    let open = format!(
        r#"<div class="pipebook-latency-matrix" data-mechanisms="{}">"#,
        escape(&serde_json::Value::from(list).to_string()),
    );
    let command = code("pipebench latency --sizes 64");
    hinted_card(
        &open,
        words.t(LATENCY_MATRIX_HEAD),
        &words.fill(SAME_TABLE, &[("command", command)]),
        words,
    )
}

/// The card that runs every mechanism in turn and charts them beside the survey.
fn ipc_matrix_widget(words: &Words) -> String {
    hinted_card(
        r#"<div class="pipebook-ipc-matrix">"#,
        words.t(IPC_MATRIX_HEAD),
        &words.fill(SAME_TABLE, &[("command", code("pipebench ipc"))]),
        words,
    )
}

/// The sweep widget's HTML contract, on one line like [`run_widget`]'s.
fn sweep_widget(step: &Step, param: SweepParam, words: &Words) -> String {
    let title = escape(words.t(step.title));
    let head = words.fill(
        SWEEP_HEAD,
        &[
            ("title", title.clone()),
            ("param", escape(words.t(param.label()))),
        ],
    );
    let command = format!(
        "pipebench sweep {} --{} VALUES",
        escape(step.id),
        param.name().replace('_', "-")
    );
    format!(
        r#"<div class="pipebook-sweep" data-step="{}" data-param="{}" data-title="{title}"><p class="pipebook-run-static"><strong>{head}</strong> {} {}</p></div>"#,
        escape(step.id),
        param.name(),
        words.t(START_HINT),
        words.fill(SAME_CURVE, &[("command", code(&command))]),
    )
}

/// The widget's HTML contract, on one line so Markdown keeps it one HTML block
/// wherever it stands (top level, list item, block quote).
fn run_widget(step: &Step, words: &Words) -> String {
    let kind = serde_json::to_value(step.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let title = escape(words.t(step.title));
    let mut attrs = format!(
        r#"class="pipebook-run" data-step="{}" data-title="{title}" data-summary="{}" data-kind="{}""#,
        escape(step.id),
        escape(words.t(step.summary)),
        escape(&kind),
    );
    let mut text = format!(
        "<strong>{}</strong> ",
        words.fill(RUN_HEAD, &[("title", title)])
    );
    if let Some(article) = step.article_gib_s {
        attrs.push_str(&format!(r#" data-article="{article}""#));
        text.push_str(&words.fill(ARTICLE_MEASURED, &[("figure", article.to_string())]));
        text.push(' ');
    }
    if let Some(range) = step.reference_gib_s {
        attrs.push_str(&format!(
            r#" data-reference="{}-{}""#,
            range.low, range.high
        ));
    }
    text.push_str(words.t(START_HINT));
    format!(r#"<div {attrs}><p class="pipebook-run-static">{text}</p></div>"#)
}

#[cfg(test)]
mod tests;
