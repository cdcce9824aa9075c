//! Queries of the run card and what grows from it: its parts that state a
//! ratio (evidence, baseline), the sweep, the profile, the kernel's counts, the
//! results table, the compare and A/A cards, the tuning and tool cards.

use super::Query;
use crate::browser::RUN_STEP;

/// The compare card's machine check, once it is said.
pub(crate) fn compare_precheck(root: &str) -> Query {
    Query::new(
        format!("compare_precheck({root})"),
        format!(
            "const p = document.querySelector('{root} .pipebook-precheck')?.textContent ?? '';
             return p.startsWith('Machine check: ') && !p.includes('looking') ? p : null;"
        ),
    )
}

/// Sets the compare card to six pairs of 16 MiB runs, until resolved on a budget of twelve, and starts it.
pub(crate) fn compare_start(root: &str) -> Query {
    Query::new(
        format!("compare_start({root})"),
        format!(
            "const r = document.querySelector('{root}');
             r.scrollIntoView({{ block: 'start' }});
             r.querySelector('input.pipebook-compare-pairs').value = '6';
             r.querySelector('input.pipebook-compare-bytes').value = '16MiB';
             r.querySelector('input.pipebook-compare-until').checked = true;
             r.querySelector('input.pipebook-compare-budget').value = '12';
             r.querySelector('button.pipebook-compare-start').click();
             return true;"
        ),
    )
}

/// The compare card's verdict, status and interval once done; its status where it says Error.
pub(crate) fn compare_verdict(root: &str) -> Query {
    Query::new(
        format!("compare_verdict({root})"),
        format!(
            "const r = document.querySelector('{root}');
             const status = r.querySelector('.pipebook-compare-status').textContent;
             if (status.startsWith('Error')) return 'error: ' + status;
             return r.dataset.state === 'done' ? {{
               verdict: r.dataset.verdict,
               sentence: r.querySelector('.pipebook-compare-verdict').textContent,
               status,
               drawn: !!r.querySelector('svg.pipebook-compare-interval rect'),
               label: r.querySelector('svg.pipebook-compare-interval')?.getAttribute('aria-label'),
               design: r.querySelector('.pipebook-design-note a')?.getAttribute('href') ?? null,
             }} : null;"
        ),
    )
}

/// Clicks the compare card's More pairs.
pub(crate) fn compare_more(root: &str) -> Query {
    Query::new(
        format!("compare_more({root})"),
        format!(
            "document.querySelector('{root} button.pipebook-compare-more').click(); return true;"
        ),
    )
}

/// The compare card once done again with a status other than `before`.
pub(crate) fn compare_taken_up(root: &str, before: &str) -> Query {
    Query::new(
        format!("compare_taken_up({root}, {before})"),
        format!(
            "const r = document.querySelector('{root}');
                 const status = r.querySelector('.pipebook-compare-status').textContent;
                 if (status.startsWith('Error')) return 'error: ' + status;
                 return r.dataset.state === 'done' && status !== {before:?} ? {{
                   status,
                   sentence: r.querySelector('.pipebook-compare-verdict').textContent,
                 }} : null;"
        ),
    )
}

/// The run card's counts table: caption, header scopes, a few cells, the model and what is missing.
pub(crate) fn kernel_counts_table(root: &str) -> Query {
    Query::new(
        format!("kernel_counts_table({root})"),
        format!(
            r#"const box = document.querySelector('{root} .pipebook-kernel');
               const t = box && box.querySelector('table.pipebook-counts');
               if (!t || box.hidden) return null;
               const cell = (count, end, per) => {{
                 const c = t.querySelector(`tr[data-count="${{count}}"] td[data-end="${{end}}"][data-per="${{per}}"]`);
                 return c ? c.textContent : null;
               }};
               return {{
                 caption: t.caption ? t.caption.textContent : null,
                 cols: [...t.querySelectorAll('thead th')].map((th) => th.getAttribute('scope')),
                 rows: [...t.querySelectorAll('tbody th')].map((th) => th.getAttribute('scope')),
                 writerCallsPerGib: cell('data_calls', 'writer', 'gib'),
                 readerCallsPerCall: cell('data_calls', 'reader', 'call'),
                 allocsPerGib: cell('page_allocs', 'writer', 'gib'),
                 model: [...box.querySelectorAll('table.pipebook-model tbody tr')]
                   .map((tr) => [tr.dataset.model, tr.dataset.verdict]),
                 missing: [...box.querySelectorAll('.pipebook-kernel-missing li')]
                   .map((li) => [li.dataset.reason, li.textContent]),
               }};"#
        ),
    )
}

/// Ticks the run card's 'Trace kernel events' box; whether it is checked.
pub(crate) fn tick_trace_box(root: &str) -> Query {
    Query::new(
        format!("tick_trace_box({root})"),
        format!(
            "const b = document.querySelector('{root} input.pipebook-trace');
             if (!b) return null;
             b.click();
             return b.checked;"
        ),
    )
}

/// Once a traced run is done and says so: its pages allocated and the counts missing.
pub(crate) fn traced_run_counts(root: &str) -> Query {
    Query::new(
        format!("traced_run_counts({root})"),
        format!(
            r#"const r = document.querySelector('{root}');
               if (r.querySelector('.pipebook-status').dataset.state !== 'done') return null;
               if (!r.textContent.includes("traced: the kernel's events")) return null;
               const c = r.querySelector('.pipebook-kernel table.pipebook-counts tr[data-count="page_allocs"] td[data-end="writer"][data-per="gib"]');
               return {{ allocs: c ? c.textContent : null,
                        missing: [...r.querySelectorAll('.pipebook-kernel-missing li')].map((li) => li.dataset.reason) }};"#
        ),
    )
}

/// The table comparing steps by their counts, once it has a run.
pub(crate) fn kernel_compare_table() -> Query {
    Query::new(
        "kernel_compare_table()",
        format!(
            r#"const t = document.querySelector('table.pipebook-kernel-compare');
               if (!t || Number(t.dataset.runs) < 1) return null;
               const head = t.querySelector('thead th[data-step="{RUN_STEP}"]');
               const cell = t.querySelector('tr[data-count="writer.data_calls"] td[data-step="{RUN_STEP}"]');
               return {{
                 caption: t.caption ? t.caption.textContent : null,
                 head: head ? head.textContent : null,
                 calls: cell ? cell.textContent : null,
                 steps: [...t.querySelectorAll('thead th[data-step]')].map((th) => th.dataset.step),
               }};"#
        ),
    )
}

/// The run card's own words counted by script, its button's, whether it shows a figure, and its long runs of Latin text.
pub(crate) fn run_card_scripts() -> Query {
    Query::new("run_card_scripts()", format!(
            "{COUNT_SCRIPTS}
             const card = document.querySelector('.pipebook-run[data-step=\"{RUN_STEP}\"]');
             const button = card.querySelector('button.pipebook-run-button');
             // The card's own words: not the runner's (marked lang=en), not commands.
             const own = card.cloneNode(true);
             own.querySelectorAll('[lang=\"en\"], code, pre, kbd, svg').forEach((e) => e.remove());
             return {{ text: count(own.innerText || own.textContent), button: count(button.textContent),
                       figure: /\\d+(\\.\\d+)?\\s*GiB\\/s/.test(card.innerText),
                       english: [...(own.innerText || own.textContent).matchAll(/[A-Za-z][A-Za-z ,.'()-]{{12,}}/g)].map((m) => m[0]).slice(0, 40) }};"
        ))
}

/// Once `ready` holds over the part `e` and its status: what the part states (and `extra`); its status where it says Error or ended.
pub(crate) fn stated_part(
    part: &str,
    status: &str,
    ready: &str,
    svg: &str,
    text: &str,
    extra: &str,
) -> Query {
    Query::new(format!("stated_part({part})"), format!(
                "const e = document.querySelector('{part}');
                 const status = e.querySelector('{status}').textContent;
                 if (status.startsWith('Error') || status.startsWith('ended')) return 'error: ' + status;
                 if (!({ready})) return null;
                 const svg = e.querySelector('svg.{svg}');
                 return {{
                   status,
                   verdict: e.dataset.verdict ?? null,
                   text: e.querySelector('{text}').textContent,
                   drawn: !!svg?.querySelector('rect'),
                   label: svg?.getAttribute('aria-label') ?? null,
                   {extra}
                 }};"
            ))
}

/// Sets the part up (`setup`), types its budget and clicks its Run until resolved.
pub(crate) fn run_until(
    part: &str,
    setup: &str,
    budget_css: &str,
    until_css: &str,
    budget: u32,
) -> Query {
    Query::new(
        format!("run_until({part}, {budget})"),
        format!(
            "const e = document.querySelector('{part}');
             e.scrollIntoView({{ block: 'center' }});
             {setup}
             e.querySelector('{budget_css}').value = '{budget}';
             e.querySelector('{until_css}').click();
             return true;"
        ),
    )
}

/// Chooses 128 KiB per call on the run card; whether it took.
pub(crate) fn choose_128k_calls(root: &str) -> Query {
    Query::new(format!("choose_128k_calls({root})"), format!(
            "const s = document.querySelector('{root} select.pipebook-buf-size') ?? document.querySelector('{root} .pipebook-buf-size select');
             s.value = '131072';
             return s.value === '131072';"
        ))
}

/// The evidence part's state and whether its Run until resolved is disabled.
pub(crate) fn evidence_state(part: &str) -> Query {
    Query::new(format!("evidence_state({part})"), format!(
            "const e = document.querySelector('{part}');
             return {{ state: e.dataset.state, until: e.querySelector('button.pipebook-evidence-until').disabled }};"
        ))
}

/// Once the part is busy: whether the card's own button `own` is disabled.
pub(crate) fn held_while_busy(part: &str, root: &str, own: &str) -> Query {
    Query::new(
        format!("held_while_busy({part}, {root}, {own})"),
        format!(
            "return document.querySelector('{part}').dataset.state === 'busy'
               ? {{ own: document.querySelector('{root} {own}').disabled }} : null;"
        ),
    )
}

/// The baseline part's text, once it has one.
pub(crate) fn baseline_text(part: &str) -> Query {
    Query::new(format!("baseline_text({part})"), format!(
            "const b = document.querySelector('{part}');
             return b && b.querySelector('.pipebook-baseline-text').textContent ? b.querySelector('.pipebook-baseline-text').textContent : null;"
        ))
}

/// Sets the pipe-size sweep to two values, half a second, two repeats, and starts it.
pub(crate) fn start_pipe_size_sweep(root: &str) -> Query {
    Query::new(
        format!("start_pipe_size_sweep({root})"),
        format!(
            "const r = document.querySelector('{root}');
             r.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-sweep-values').value = '16KiB,1MiB';
             r.querySelector('input.pipebook-seconds').value = '0.5';
             r.querySelector('input.pipebook-sweep-repeats').value = '2';
             r.querySelector('button.pipebook-sweep-button').click();
             return true;"
        ),
    )
}

/// Ticks the run card's Quiet box.
pub(crate) fn tick_quiet(root: &str) -> Query {
    Query::new(
        format!("tick_quiet({root})"),
        format!(
            "document.querySelector('{root} input.pipebook-quiet').checked = true; return true;"
        ),
    )
}

/// The results table's cell against the article, once it has an interval.
pub(crate) fn results_vs_article() -> Query {
    Query::new("results_vs_article()", format!(
            "const td = document.querySelector('.pipebook-results tr[data-step=\"{RUN_STEP}\"] td.pipebook-vs-article');
             if (!td || td.dataset.ciLow === undefined) return null;
             td.scrollIntoView({{ block: 'center' }});
             return {{ figure: td.firstChild.textContent, used: td.querySelector('.pipebook-results-used').textContent,
                       quiet: Number(td.dataset.quiet), verdict: td.dataset.verdict,
                       caption: document.querySelector('.pipebook-results-note').textContent }};"
        ))
}

/// Scrolls to the card's `button` and runs `setup`; false where the card or button is missing.
pub(crate) fn past_setup(root: &str, button: &str, setup: &str) -> Query {
    Query::new(
        format!("past_setup({root}, {button})"),
        format!(
            "const r = document.querySelector('{root}');
                 if (!r || !r.querySelector('{button}')) return false;
                 // The button itself, clear of mdBook's sticky menu bar: a card
                 // taller than the window centred would leave it under the bar.
                 r.querySelector('{button}').scrollIntoView({{ block: 'center' }});
                 {setup}
                 return true;"
        ),
    )
}

/// Sets half a second and starts the profile of the run card.
pub(crate) fn profile_start(root: &str) -> Query {
    Query::new(
        format!("profile_start({root})"),
        format!(
            "const r = document.querySelector('{root}');
             r.querySelector('input.pipebook-seconds').value = '0.5';
             r.querySelector('.pipebook-profile').scrollIntoView({{ block: 'start' }});
             r.querySelector('button.pipebook-profile-button').click();
             return true;"
        ),
    )
}

/// The run card's occupancy chart: state, points, band, capacity, legend, note, height.
pub(crate) fn occupancy(root: &str) -> Query {
    Query::new(
        format!("occupancy({root})"),
        format!(
            r#"const fig = document.querySelector('{root} figure.pipebook-occupancy');
               if (!fig) return null;
               const band = fig.querySelector('polygon.pipebook-occupancy-band');
               const box = fig.querySelector('svg').getBoundingClientRect();
               return {{
                 state: fig.dataset.state,
                 points: Number(fig.dataset.points),
                 bandPoints: band ? band.getAttribute('points').trim().split(/\s+/).length : 0,
                 capacity: fig.querySelector('.pipebook-occupancy-caplabel')?.textContent ?? '',
                 legend: fig.querySelectorAll('.pipebook-occupancy-legend li').length,
                 note: fig.querySelector('.pipebook-occupancy-note').textContent,
                 height: box.height,
               }};"#
        ),
    )
}

/// Sets the A/A card to two tries of 8 MiB runs and starts it.
pub(crate) fn aa_start(root: &str) -> Query {
    Query::new(
        format!("aa_start({root})"),
        format!(
            "const r = document.querySelector('{root}');
             r.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-aa-tries').value = '2';
             r.querySelector('input.pipebook-aa-bytes').value = '8MiB';
             r.querySelector('button.pipebook-aa-start').click();
             return true;"
        ),
    )
}

/// Once the A/A card runs its first try: its status's aria-live and whether Stop shows.
pub(crate) fn aa_busy(root: &str) -> Query {
    Query::new(format!("aa_busy({root})"), format!(
            "const r = document.querySelector('{root}');
             const s = r.querySelector('.pipebook-aa-status');
             return r.dataset.state === 'busy' && s.textContent.startsWith('Try 1 of 2')
               ? {{ live: s.getAttribute('aria-live'), stop: !r.querySelector('button.pipebook-aa-stop').hidden }} : null;"
        ))
}

/// The A/A card's tries, claims and verdicts once done; its status where it says Error.
pub(crate) fn aa_done(root: &str) -> Query {
    Query::new(format!("aa_done({root})"), format!(
            "const r = document.querySelector('{root}');
             const status = r.querySelector('.pipebook-aa-status').textContent;
             if (status.startsWith('Error')) return 'error: ' + status;
             return r.dataset.state === 'done' ? {{
               status,
               tries: Number(r.dataset.tries),
               claims: Number(r.dataset.claims),
               count: r.querySelector('.pipebook-aa-count').textContent,
               verdicts: [...r.querySelectorAll('ol.pipebook-aa-list li')].map((li) => li.dataset.verdict),
               items: [...r.querySelectorAll('ol.pipebook-aa-list li')].map((li) => li.textContent),
             }} : null;"
        ))
}

/// Types three sizes, half a second and one repeat into the sweep; false where there is no sweep.
pub(crate) fn sweep_fill(root: &str) -> Query {
    Query::new(
        format!("sweep_fill({root})"),
        format!(
            "const r = document.querySelector('{root}');
             if (!r) return false;
             r.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-sweep-values').value = '16KiB,64KiB,256KiB';
             r.querySelector('input.pipebook-seconds').value = '0.5';
             r.querySelector('input.pipebook-sweep-repeats').value = '1';
             return true;"
        ),
    )
}

/// What the tune card kept, once it says.
pub(crate) fn tune_kept(root: &str) -> Query {
    Query::new(
        format!("tune_kept({root})"),
        format!(
            "const r = document.querySelector('{root}');
             return r.dataset.kept ? {{ kept: r.dataset.kept,
               text: r.querySelector('.pipebook-tune-kept').textContent }} : null;"
        ),
    )
}

/// The variant's step, its id and title.
pub(crate) fn variant_heading(variant: &str) -> Query {
    Query::new(format!("variant_heading({variant})"), format!(
            "const v = document.querySelector('{variant}');
             return {{ step: v.dataset.step, id: v.querySelector('.pipebook-step-id')?.textContent ?? '',
                      title: v.querySelector('.pipebook-title')?.textContent ?? '' }};"
        ))
}

/// Scrolls the results table's row of `step` to the middle.
pub(crate) fn scroll_to_results_row(step: &str) -> Query {
    Query::new(format!("scroll_to_results_row({step})"), format!(
            "document.querySelector('.pipebook-results tr[data-step=\"{step}\"]').scrollIntoView({{ block: 'center' }}); return true;"
        ))
}

/// Types 3 seconds into the run card.
pub(crate) fn run_card_seconds(root: &str) -> Query {
    Query::new(
        format!("run_card_seconds({root})"),
        format!(
            "const r = document.querySelector('{root}');
             r.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-seconds').value = '3';
             return true;"
        ),
    )
}

/// Types 99999 seconds into the run card, its form unchecked.
pub(crate) fn run_card_too_long(root: &str) -> Query {
    Query::new(
        format!("run_card_too_long({root})"),
        format!(
            "const input = document.querySelector('{root} input.pipebook-seconds');
             // As a browser that does not check forms itself would send it.
             input.form.noValidate = true;
             input.value = '99999';
             return true;"
        ),
    )
}

/// How many characters of a text are Chinese, and how many are Latin letters.
const COUNT_SCRIPTS: &str = "const count = (s) => ({
    cjk: (s.match(/\\p{Script=Han}/gu) || []).length,
    latin: (s.match(/[A-Za-z]/g) || []).length });";

/// What the compare card offers once done: More pairs, or that its verdict is final.
pub(crate) fn compare_offer(root: &str) -> Query {
    Query::new(
        format!("compare_offer({root})"),
        format!(
            "const r = document.querySelector('{root}');
         const more = r.querySelector('button.pipebook-compare-more');
         const final = r.querySelector('.pipebook-compare-final');
         return {{ more: more.hidden ? null : more.textContent,
                   final: final.hidden ? null : final.textContent }};"
        ),
    )
}

/// The run card's profile, once it has ended: state, status, images, comparison and notes.
pub(crate) fn profile_done(root: &str) -> Query {
    Query::new(format!("profile_done({root})"), format!(
        "const p = document.querySelector('{root} .pipebook-profile');
         const state = p.dataset.state;
         if (state === 'running' || state === 'idle') return null;
         const imgs = [...p.querySelectorAll('img.pipebook-flamegraph')];
         return {{ state, status: p.querySelector('.pipebook-profile-status').textContent,
                  images: imgs.map((i) => ({{ role: i.dataset.role, loaded: i.complete && i.naturalWidth > 0 }})),
                  compare: p.querySelectorAll('table.pipebook-profile-compare tbody tr').length,
                  notes: [...p.querySelectorAll('.pipebook-profile-note')].map((n) => n.dataset.kind) }};"
    ))
}

/// The sweep card's state, points, dots, table and status.
pub(crate) fn sweep_card(root: &str) -> Query {
    Query::new(
        format!("sweep_card({root})"),
        format!(
            "const r = document.querySelector('{root}');
         return {{ state: r.dataset.state, points: Number(r.dataset.points),
                  drawn: Number(r.querySelector('svg.pipebook-sweep-plot').dataset.points),
                  dots: r.querySelectorAll('circle.pipebook-sweep-dot').length,
                  rows: r.querySelectorAll('table.pipebook-sweep-table tr').length,
                  status: r.querySelector('.pipebook-status').textContent }};"
        ),
    )
}

/// Whether the run card says its result was saved, once it says.
pub(crate) fn run_card_saved(root: &str) -> Query {
    Query::new(
        format!("run_card_saved({root})"),
        format!(
            "const note = document.querySelector('{root} .pipebook-saved');
         if (!note.dataset.saved) return null;
         return {{ saved: note.dataset.saved, hidden: note.hidden, text: note.textContent }};"
        ),
    )
}

/// The tool card's state, verified bytes, result table and status.
pub(crate) fn tool_card(root: &str) -> Query {
    Query::new(format!("tool_card({root})"), format!(
        "const r = document.querySelector('{root}');
         return {{ state: r.dataset.state, bytes: Number(r.dataset.bytes ?? 0),
                  table: [...r.querySelectorAll('table.pipebook-tool-result tr')].map((tr) => tr.textContent),
                  status: r.querySelector('.pipebook-status').textContent }};"
    ))
}

/// The tuning card `r`'s state, best configuration and status.
pub(crate) fn tune_best() -> Query {
    Query::new(
        "tune_best()",
        "return { state: r.dataset.state, best: r.dataset.best ?? null,
                  status: r.querySelector('.pipebook-status').textContent };",
    )
}

/// The card `r`'s state and status.
pub(crate) fn run_state() -> Query {
    Query::new("run_state()", "return { state: r.dataset.state, status: r.querySelector('.pipebook-status').textContent };")
}

/// The tuning card `r`'s search: trials, best, heat-map cells and captions, table, summary and status.
pub(crate) fn tune_search() -> Query {
    Query::new("tune_search()", "const cells = [...r.querySelectorAll('svg.pipebook-tune-heat rect.pipebook-tune-cell')];
         const maps = [...r.querySelectorAll('svg.pipebook-tune-heat')].map((m) => m.dataset.pages);
         const captions = [...r.querySelectorAll('.pipebook-tune-map figcaption')].map((c) => c.textContent);
         return { state: r.dataset.state, trials: Number(r.dataset.trials ?? 0), best: r.dataset.best ?? null,
                  cells: cells.length, measured: cells.filter((c) => c.hasAttribute('data-median')).length,
                  rows: r.querySelectorAll('table.pipebook-tune-table tr').length,
                  summary: r.querySelector('.pipebook-tune-summary').textContent,
                  variant: r.querySelector('.pipebook-tune-variant .pipebook-run')?.dataset.step ?? null,
                  maps, captions,
                  status: r.querySelector('.pipebook-status').textContent };")
}

/// The run card `r`'s state, figure and status.
pub(crate) fn run_figure() -> Query {
    Query::new("run_figure()", "return { state: r.dataset.state, gibs: r.querySelector('.pipebook-result-gibs')?.textContent ?? null,
                  status: r.querySelector('.pipebook-status').textContent };")
}

/// A script that reads the results table's rows into `rows`, `{step: {runs,
/// name, best}}`, then evaluates `ready` (with `rows` in scope): the table's
/// rows once `ready` is true, else null.
fn results_rows_when(name: String, ready: &str) -> Query {
    Query::new(
        name,
        format!(
            "const rows = Object.fromEntries([...document.querySelectorAll('.pipebook-results tr[data-step]')]
           .map((tr) => [tr.dataset.step, {{ runs: Number(tr.dataset.runs),
             name: tr.querySelector('th').textContent,
             best: tr.querySelector('.pipebook-best').textContent }}]));
         return ({ready}) ? rows : null;"
        ),
    )
}

/// The results table's rows, once it lists `step`.
pub(crate) fn results_rows_listing(step: &str) -> Query {
    results_rows_when(
        format!("results_rows_listing({step})"),
        &format!("'{step}' in rows"),
    )
}

/// The results table's rows, once its row of `step` counts more than `before` runs.
pub(crate) fn results_rows_beyond(step: &str, before: u64) -> Query {
    results_rows_when(
        format!("results_rows_beyond({step}, {before})"),
        &format!("rows['{step}'] && rows['{step}'].runs > {before}"),
    )
}

/// What the tests read of a run card: its state and figures, and its buttons.
pub(crate) fn run_card(root: &str) -> Query {
    Query::new(
        format!("run_card({root})"),
        format!(
            r#"const root = document.querySelector('{root}');
           return {{
             state: root.querySelector('.pipebook-status').dataset.state,
             progress: Number(root.dataset.progressCount),
             live: root.querySelector('.pipebook-live-gibs').textContent,
             result: root.querySelector('.pipebook-result-gibs').textContent,
             status: root.querySelector('.pipebook-status').textContent,
             runDisabled: root.querySelector('button.pipebook-run-button').disabled,
             cancelDisabled: root.querySelector('button.pipebook-cancel-button').disabled,
           }};"#
        ),
    )
}
