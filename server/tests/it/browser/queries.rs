//! Every script the browser tests run in the page, each a named query: a test
//! asks `queries::card_idle(root)`, not a string of JavaScript, so that a script
//! that throws, or a wait that runs out, says which question it was.
//!
//! A query returns what the test reads (an object, a list, a flag); the test
//! judges it. Queries that wait ([`Query::wait`]) return null, false or ""
//! until what they wait for is there.

use super::RUN_STEP;

/// A script to run in the page, with the name a failure reports it by.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    name: String,
    script: String,
}

/// `body`, a query over a card it calls `r`, run on the card at `root`.
pub(crate) fn on(root: &str, body: &Query) -> Query {
    Query::new(
        format!("{} on {root}", body.name()),
        format!(
            "const r = document.querySelector('{root}'); {}",
            body.script()
        ),
    )
}

impl Query {
    /// `name` is what a failure calls it: the query's function and its arguments.
    pub(crate) fn new(name: impl Into<String>, script: impl Into<String>) -> Query {
        Query {
            name: name.into(),
            script: script.into(),
        }
    }

    /// The query's name and arguments, as failures report it.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The JavaScript, a function body (it `return`s what it reads).
    pub(crate) fn script(&self) -> &str {
        &self.script
    }
}

/// Marks the open page, to tell a page restored from the back/forward cache from one loaded again.
pub(crate) fn mark_page_stayed() -> Query {
    Query::new(
        "mark_page_stayed()",
        "window.pipebookStayed = 'yes'; return true;",
    )
}

/// Once back on the baseline chapter: the page's mark (if it was restored) and Chromium's reasons for not restoring it.
pub(crate) fn bfcache_restore() -> Query {
    Query::new(
        "bfcache_restore()",
        "if (!location.pathname.endsWith('/baseline.html')) return null;
             const nav = performance.getEntriesByType('navigation')[0];
             const reasons = nav && nav.notRestoredReasons;
             const list = [];
             const walk = (r) => {
               if (!r) return;
               for (const x of r.reasons || []) list.push(x.reason || String(x));
               for (const c of r.children || []) walk(c);
             };
             walk(reasons);
             return { stayed: window.pipebookStayed || null, reasons: list };",
    )
}

/// Changes the token the page holds (as a server restart would make it stale), marks the page, and returns the token it held.
pub(crate) fn stale_page_token() -> Query {
    Query::new("stale_page_token()", "const m = document.querySelector('meta[name=\"pipebook-token\"]');
             const token = m.getAttribute('content');
             m.setAttribute('content', 'ffff' + token.slice(4) === token ? '0000' + token.slice(4) : 'ffff' + token.slice(4));
             window.pipebookStayed = 'yes';
             return token;")
}

/// Once the baseline chapter has loaded again (unmarked, online): the token it carries.
pub(crate) fn reloaded_page_token() -> Query {
    Query::new("reloaded_page_token()", "if (!location.pathname.endsWith('/baseline.html') || window.pipebookStayed) return null;
             if (document.documentElement.dataset.pipebookReady !== 'online') return null;
             return document.querySelector('meta[name=\"pipebook-token\"]').getAttribute('content');")
}

/// Once back on the baseline chapter: its mark, or 'reloaded'.
pub(crate) fn page_stayed_after_back() -> Query {
    Query::new("page_stayed_after_back()", "return location.pathname.endsWith('/baseline.html') ? (window.pipebookStayed || 'reloaded') : null;")
}

/// The runner's `/api/params`, fetched by the page.
pub(crate) fn api_params() -> Query {
    Query::new(
        "api_params()",
        "return fetch('/api/params').then((r) => r.json());",
    )
}

/// The input's min, max and first value, or null where the page has no such input.
pub(crate) fn input_bounds(input: &str) -> Query {
    Query::new(
        format!("input_bounds({input})"),
        format!(
            "const i = document.querySelector('{}');
                 return i && {{ min: Number(i.min), max: Number(i.max), start: Number(i.value) }};",
            input.replace('\'', "\\'")
        ),
    )
}

/// How many Mermaid diagrams the page has, how many are drawn, and their errors.
pub(crate) fn diagrams_drawn() -> Query {
    Query::new(
        "diagrams_drawn()",
        r#"const pres = [...document.querySelectorAll("pre.mermaid")];
               const drawn = pres.filter((p) => {
                 const svg = p.querySelector("svg");
                 return svg && svg.getAttribute("aria-roledescription") !== "error";
               });
               return { total: pres.length, drawn: drawn.length,
                        errors: pres.filter((p) => p.dataset.error).map((p) => p.dataset.error) };"#,
    )
}

/// Whether the page fetched the Mermaid bundle.
pub(crate) fn mermaid_fetched() -> Query {
    Query::new(
        "mermaid_fetched()",
        r#"return performance.getEntriesByType("resource").some((e) => e.name.endsWith("/vendor/mermaid/mermaid.esm.min.mjs"));"#,
    )
}

/// How long the page took to load, and what it fetched (the Mermaid files apart).
pub(crate) fn load_timing() -> Query {
    Query::new(
        "load_timing()",
        r#"const nav = performance.getEntriesByType("navigation")[0];
           const parts = performance.getEntriesByType("resource")
             .filter((e) => e.name.includes("/vendor/mermaid"));
           const mermaid = parts.length ? { responseEnd: Math.max(...parts.map((e) => e.responseEnd)),
             transferSize: parts.reduce((sum, e) => sum + (e.transferSize || 0), 0), files: parts.length } : null;
           return { load_ms: nav.loadEventEnd - nav.startTime,
                    dom_ms: nav.domContentLoadedEventEnd - nav.startTime,
                    mermaid_end_ms: mermaid ? mermaid.responseEnd : null,
                    slowest: performance.getEntriesByType("resource")
                      .map((e) => [e.name.split("/").pop(), Math.round(e.responseEnd)])
                      .sort((a, b) => b[1] - a[1]).slice(0, 4),
                    transferred: performance.getEntriesByType("resource")
                      .reduce((sum, e) => sum + (e.transferSize || 0), nav.transferSize || 0),
                    mermaid_files: mermaid ? mermaid.files : 0,
                    mermaid_bytes: mermaid ? mermaid.transferSize : null };"#,
    )
}

/// In the navy theme, the theme the diagrams were drawn in.
pub(crate) fn navy_diagram_theme() -> Query {
    Query::new("navy_diagram_theme()", "return document.documentElement.classList.contains('navy') && document.documentElement.dataset.pipebookDiagrams")
}

/// Whether the page has a Mermaid diagram.
pub(crate) fn has_diagram() -> Query {
    Query::new(
        "has_diagram()",
        "return !!document.querySelector('pre.mermaid')",
    )
}

/// Whether the card at `root` is idle.
pub(crate) fn card_idle(root: &str) -> Query {
    Query::new(
        format!("card_idle({root})"),
        format!("return document.querySelector('{root}')?.dataset.state === 'idle';"),
    )
}

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

/// Whether the language menu offers the Chinese edition.
pub(crate) fn zh_link_shown() -> Query {
    Query::new(
        "zh_link_shown()",
        "return document.querySelector('.pipebook-language a[hreflang=\"zh-CN\"]') ? true : null;",
    )
}

/// Once on a loaded Chinese page: its path, hash and the heading the hash names.
pub(crate) fn zh_landing() -> Query {
    Query::new(
        "zh_landing()",
        "return document.documentElement.lang === 'zh-CN' && document.readyState === 'complete'
           ? { path: location.pathname, hash: location.hash,
               heading: document.getElementById(location.hash.slice(1))?.textContent ?? null }
           : null;",
    )
}

/// Once on a loaded English page: its path and hash.
pub(crate) fn en_landing() -> Query {
    Query::new(
        "en_landing()",
        "return document.documentElement.lang === 'en' && document.readyState === 'complete'
           ? location.pathname + location.hash : null;",
    )
}

/// The search results' links, once there are any.
pub(crate) fn search_hrefs() -> Query {
    Query::new(
        "search_hrefs()",
        "const links = [...document.querySelectorAll('#mdbook-searchresults a')];
         return links.length ? links.map((a) => a.getAttribute('href')) : null;",
    )
}

/// Clicks the first search result in the zero-copy chapters.
pub(crate) fn click_zero_copy_result() -> Query {
    Query::new(
        "click_zero_copy_result()",
        "const a = [...document.querySelectorAll('#mdbook-searchresults a')]
           .find((a) => a.getAttribute('href').startsWith('zero-copy'));
         a.click(); return true;",
    )
}

/// Once on the loaded Chinese zero-copy page: its language and whether it says 零拷贝.
pub(crate) fn zh_zero_copy_page() -> Query {
    Query::new("zh_zero_copy_page()", "return location.pathname.startsWith('/zh-CN/zero-copy') && document.readyState === 'complete'
           ? { lang: document.documentElement.lang,
               found: document.querySelector('main').textContent.includes('零拷贝') }
           : null;")
}

/// Whether a search result leads to the vmsplice chapter.
pub(crate) fn vmsplice_result_shown() -> Query {
    Query::new(
        "vmsplice_result_shown()",
        "return [...document.querySelectorAll('#mdbook-searchresults a')]
           .some((a) => a.getAttribute('href').startsWith('vmsplice')) || null;",
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

/// Empties the page's localStorage.
pub(crate) fn clear_storage() -> Query {
    Query::new("clear_storage()", "localStorage.clear(); return true;")
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

/// Whether the page has an element `css`.
pub(crate) fn exists(css: &str) -> Query {
    Query::new(
        format!("exists({css})"),
        format!("return !!document.querySelector('{css}');"),
    )
}

/// Sets the matrix's head-to-head to pipe-rw against sysv-msgqueue; its text.
pub(crate) fn ipc_versus_pick(part: &str) -> Query {
    Query::new(
        format!("ipc_versus_pick({part})"),
        format!(
            "const v = document.querySelector('{part}');
             v.scrollIntoView({{ block: 'center' }});
             v.querySelector('select.pipebook-ipc-versus-a').value = 'pipe-rw';
             v.querySelector('select.pipebook-ipc-versus-b').value = 'sysv-msgqueue';
             v.querySelector('select.pipebook-ipc-versus-b').dispatchEvent(new Event('change'));
             return v.querySelector('.pipebook-ipc-versus-text').textContent;"
        ),
    )
}

/// Whether the IPC card's survey part is shown and counts its quiet runs.
pub(crate) fn survey_part_ready(part: &str) -> Query {
    Query::new(format!("survey_part_ready({part})"), format!("const e = document.querySelector('{part}'); return e && !e.hidden && e.dataset.quiet !== undefined;"))
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

/// How many earlier runs the IPC card counts, once it has read the history.
pub(crate) fn ipc_earlier_runs(root: &str) -> Query {
    Query::new(
        format!("ipc_earlier_runs({root})"),
        format!("return document.querySelector('{root}')?.dataset.earlierRuns ?? null;"),
    )
}

/// The IPC card's count of earlier runs, once it is at least `at_least`.
pub(crate) fn ipc_earlier_runs_reach(root: &str, at_least: u64) -> Query {
    Query::new(
        format!("ipc_earlier_runs_reach({root}, {at_least})"),
        format!(
            "const r = document.querySelector('{root}');
             return Number(r.dataset.earlierRuns) >= {} ? r.dataset.earlierRuns : null;",
            at_least
        ),
    )
}

/// Ticks the IPC card's Quiet box, types `bytes` and clicks Run.
pub(crate) fn ipc_start_quiet(root: &str, bytes: &str) -> Query {
    Query::new(
        format!("ipc_start_quiet({root}, {bytes})"),
        format!(
            "const r = document.querySelector('{root}');
             r.querySelector('input.pipebook-ipc-quiet').checked = true;
             r.querySelector('input.pipebook-ipc-bytes').value = '{bytes}';
             const b = r.querySelector('button.pipebook-ipc-button');
             b.scrollIntoView({{ block: 'center' }});
             b.click();
             return true;"
        ),
    )
}

/// Whether the IPC card's counts box is ticked (null where it has none).
pub(crate) fn ipc_counts_box(root: &str) -> Query {
    Query::new(
        format!("ipc_counts_box({root})"),
        format!(
            "return document.querySelector('{root} input.pipebook-ipc-counts')?.checked ?? null;"
        ),
    )
}

/// Every kernel probe of the page, once all have a state: probe, state and text.
pub(crate) fn kernel_probes() -> Query {
    Query::new(
        "kernel_probes()",
        "const ls = [...document.querySelectorAll('.pipebook-kernel')];
         return ls.length && ls.every((l) => l.dataset.state)
           ? ls.map((l) => ({ probe: l.dataset.probe, state: l.dataset.state,
                text: l.querySelector('.pipebook-kernel-text').textContent }))
           : null;",
    )
}

/// Opens the crafted kernel lines' details.
pub(crate) fn open_crafted_lines() -> Query {
    Query::new("open_crafted_lines()", "document.querySelectorAll('#crafted-kernel-lines details').forEach((d) => d.open = true); return true;")
}

/// Opens the kernel probe's details and clicks Probe again.
pub(crate) fn probe_kernel_again() -> Query {
    Query::new(
        "probe_kernel_again()",
        "const d = document.querySelector('.pipebook-kernel details'); d.open = true;
         d.querySelector('button.pipebook-kernel-probe').click(); return true;",
    )
}

/// The kernel probe's status, once it offers to probe again.
pub(crate) fn kernel_status_again() -> Query {
    Query::new(
        "kernel_status_again()",
        "const s = document.querySelector('.pipebook-kernel-status');
         return s && /again/.test(s.textContent) ? s.textContent : null;",
    )
}

/// Clicks the system page's kernel probe, once it is there.
pub(crate) fn click_system_probe() -> Query {
    Query::new(
        "click_system_probe()",
        "const b = document.querySelector('.pipebook-system-kernel button.pipebook-kernel-probe');
         if (!b) return null; b.click(); return true;",
    )
}

/// How many probes the system page lists, once its status offers to probe again.
pub(crate) fn system_probe_again() -> Query {
    Query::new(
        "system_probe_again()",
        "const s = document.querySelector('.pipebook-system-kernel .pipebook-kernel-status');
         return s && /again/.test(s.textContent)
           ? document.querySelectorAll('.pipebook-system-kernel li[data-probe]').length : null;",
    )
}

/// What the two early-reuse checks assume, and whether the double-buffer check assumes nothing.
pub(crate) fn check_assumptions() -> Query {
    Query::new("check_assumptions()", "const t = (id) => document.querySelector(`li[data-check='${id}'] .pipebook-check-assumes`)?.textContent;
         const a = t('early-reuse-breaks'), b = t('early-reuse-harmless');
         return a && b ? [a, b, document.querySelector(`li[data-check='double-buffer-clean'] .pipebook-check-assumes`) === null] : null;")
}

/// Runs `fill` with the lab card as `r`.
pub(crate) fn lab_fill(root: &str, fill: &str) -> Query {
    Query::new(
        format!("lab_fill({root})"),
        format!("const r = document.querySelector('{root}'); {fill} return true;"),
    )
}

/// Whether the lab card shows `shown` as its prediction and unlocks its runs.
pub(crate) fn lab_prediction_saved(root: &str, shown: &str) -> Query {
    Query::new(
        format!("lab_prediction_saved({root}, {shown})"),
        format!(
            "const r = document.querySelector('{root}');
             return r.querySelector('.pipebook-lab-predicted').textContent.includes('{shown}')
                 && !r.querySelector('button.pipebook-lab-run').disabled;"
        ),
    )
}

/// Whether the lab card is idle with `measurements` measurements; its status where it says Error.
pub(crate) fn lab_idle_with(root: &str, measurements: usize) -> Query {
    Query::new(
        format!("lab_idle_with({root}, {measurements})"),
        format!(
            "const r = document.querySelector('{root}');
             const status = r.querySelector('.pipebook-lab-status').textContent;
             if (status.startsWith('Error')) return 'error: ' + status;
             return r.dataset.state === 'idle' && r.dataset.measurements === '{measurements}';"
        ),
    )
}

/// The lab card's checks and their statuses.
pub(crate) fn lab_check_statuses(root: &str) -> Query {
    Query::new(
        format!("lab_check_statuses({root})"),
        format!(
            "return [...document.querySelectorAll('{root} li[data-check]')]
               .map((li) => [li.dataset.check, li.dataset.status]);"
        ),
    )
}

/// The lab card's tasks (command, locked) and `extra`.
pub(crate) fn lab_tasks(root: &str, extra: &str) -> Query {
    Query::new(
        format!("lab_tasks({root})"),
        format!(
            "const r = document.querySelector('{root}');
             r.scrollIntoView({{ block: 'start' }});
             return {{
               tasks: [...r.querySelectorAll('.pipebook-lab-tasks li[data-task]')].map((li) => ({{
                 task: li.dataset.task,
                 text: li.querySelector('code').textContent,
                 locked: li.querySelector('button.pipebook-lab-run').disabled,
               }})),
               {extra}
             }};"
        ),
    )
}

/// The lab card's verdict, runs table and status.
pub(crate) fn lab_runs_table(root: &str) -> Query {
    Query::new(format!("lab_runs_table({root})"), format!(
            "const r = document.querySelector('{root}');
             return {{
               verdict: r.querySelector('.pipebook-lab-verdict').textContent,
               head: [...r.querySelectorAll('table.pipebook-lab-runs th')].map((th) => th.textContent),
               rows: r.querySelectorAll('table.pipebook-lab-runs tr').length,
               status: r.querySelector('.pipebook-lab-status').textContent,
             }};"
        ))
}

/// The lab card's check details and machine check.
pub(crate) fn lab_check_details(root: &str) -> Query {
    Query::new(format!("lab_check_details({root})"), format!(
            "const r = document.querySelector('{root}');
             return {{ details: [...r.querySelectorAll('.pipebook-check-detail')].map((p) => p.textContent),
                       precheck: r.querySelector('.pipebook-precheck')?.textContent ?? '' }};"
        ))
}

/// The lab card's verdict.
pub(crate) fn lab_verdict(root: &str) -> Query {
    Query::new(
        format!("lab_verdict({root})"),
        format!("return document.querySelector('{root} .pipebook-lab-verdict').textContent;"),
    )
}

/// Scrolls to the top of the page.
pub(crate) fn scroll_to_top() -> Query {
    Query::new("scroll_to_top()", "window.scrollTo(0, 0); return true;")
}

/// Whether the lab card's Run is disabled.
pub(crate) fn lab_run_locked(root: &str) -> Query {
    Query::new(
        format!("lab_run_locked({root})"),
        format!("return document.querySelector('{root} button.pipebook-lab-run').disabled;"),
    )
}

/// Whether the lab card has two measurements, its prediction locked, and its checks judged `checks`.
pub(crate) fn lab_judged(root: &str, checks: &str) -> Query {
    Query::new(format!("lab_judged({root}, {checks})"), format!(
            "const r = document.querySelector('{root}');
             return r.dataset.measurements === '2' && r.querySelector('.pipebook-prediction-input').disabled
                 && r.dataset.checks === '{}';",
            checks
        ))
}

/// Types a student's name into the lab card.
pub(crate) fn lab_student_name(root: &str) -> Query {
    Query::new(
        format!("lab_student_name({root})"),
        format!(
            "const input = document.querySelector('{root} .pipebook-lab-student');
             input.value = 'Test Student';
             input.dispatchEvent(new Event('input'));
             return true;"
        ),
    )
}

/// The lab card's HTML export link.
pub(crate) fn lab_export_href(root: &str) -> Query {
    Query::new(
        format!("lab_export_href({root})"),
        format!("return document.querySelector('{root} a.pipebook-lab-export-html').href;"),
    )
}

/// The browser's user agent.
pub(crate) fn user_agent() -> Query {
    Query::new("user_agent()", "return navigator.userAgent;")
}

/// The page's path.
pub(crate) fn location_path() -> Query {
    Query::new("location_path()", "return location.pathname;")
}

/// Runs `setup` on the latency card `r`; false where it has no Run button.
pub(crate) fn latency_setup(root: &str, setup: &str) -> Query {
    Query::new(
        format!("latency_setup({root})"),
        format!(
            "const r = document.querySelector('{root}');
             if (!r || !r.querySelector('button.pipebook-latency-button')) return false;
             r.scrollIntoView({{ block: 'center' }});
             {setup}
             return true;"
        ),
    )
}

/// The detail of the lab card's check `check`.
pub(crate) fn check_detail(root: &str, check: &str) -> Query {
    Query::new(format!("check_detail({root}, {check})"), format!(
            "return document.querySelector('{root} li[data-check=\"{check}\"] .pipebook-check-detail')?.textContent ?? '';"
        ))
}

/// The system page's findings, once at least three are whole and all are.
pub(crate) fn system_findings() -> Query {
    Query::new(
        "system_findings()",
        "const items = [...document.querySelectorAll('.pipebook-system .pipebook-finding')];
         const full = items.filter((li) => li.dataset.id
           && li.querySelector('.pipebook-finding-title').textContent
           && li.querySelector('.pipebook-finding-evidence').textContent.startsWith('Seen: ')
           && li.querySelector('.pipebook-finding-effect').textContent);
         return full.length >= 3 && full.length === items.length
           ? items.map((li) => li.dataset.id) : null;",
    )
}

/// Scrolls the findings to the top.
pub(crate) fn scroll_to_findings() -> Query {
    Query::new("scroll_to_findings()", "document.querySelector('.pipebook-findings').scrollIntoView({ block: 'start' }); return true;")
}

/// Clicks the wake-up measure's button.
pub(crate) fn click_wakeup() -> Query {
    Query::new(
        "click_wakeup()",
        "document.querySelector('.pipebook-wakeup-button').click(); return true;",
    )
}

/// The wake-up measure's result once done and listed among the findings; its text where it failed.
pub(crate) fn wakeup_result() -> Query {
    Query::new(
        "wakeup_result()",
        "const panel = document.querySelector('.pipebook-wakeup');
         if (panel.dataset.state === 'error') return panel.textContent;
         return panel.dataset.state === 'done'
           && document.querySelector('.pipebook-finding[data-id=\"wakeup-cost\"]')
           ? panel.querySelector('.pipebook-wakeup-result').textContent : null;",
    )
}

/// The Content-Security-Policy violations the recorder saw.
pub(crate) fn csp_violations() -> Query {
    Query::new("csp_violations()", "return window.__pipebookCsp || []")
}

/// Types `bytes` into the IPC card at `root`; false where it has no such input.
pub(crate) fn ipc_fill_bytes(root: &str, bytes: &str) -> Query {
    Query::new(
        format!("ipc_fill_bytes({root}, {bytes})"),
        format!(
            "const r = document.querySelector('{root}');
             if (!r || !r.querySelector('input.pipebook-ipc-bytes')) return false;
             r.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-ipc-bytes').value = '{bytes}';
             return true;"
        ),
    )
}

/// The box of the element `css`, with a 12 px margin, as a screenshot clip.
pub(crate) fn element_clip(css: &str) -> Query {
    Query::new(
        format!("element_clip({css})"),
        format!(
            "const r = document.querySelector('{css}').getBoundingClientRect();
             return {{ x: Math.max(0, r.left + scrollX - 12), y: Math.max(0, r.top + scrollY - 12),
                       width: r.width + 24, height: r.height + 24, scale: 1 }};"
        ),
    )
}

/// Stores `theme` as the mdBook theme.
pub(crate) fn store_theme(theme: &str) -> Query {
    Query::new(
        format!("store_theme({theme})"),
        format!("localStorage.setItem('mdbook-theme', '{theme}'); return true;"),
    )
}

/// Scrolls the element `root` to the top of the window.
pub(crate) fn scroll_to_start(root: &str) -> Query {
    Query::new(
        format!("scroll_to_start({root})"),
        format!("document.querySelector('{root}').scrollIntoView({{ block: 'start' }});"),
    )
}

/// Walks the second panel's address; what the walk shows.
pub(crate) fn walk_second_panel() -> Query {
    Query::new("walk_second_panel()", "document.querySelectorAll('.pipebook-pages-panel')[1].querySelector('button.pipebook-pages-walk').click();
         const s = document.querySelector('.pipebook-walk svg.pipebook-walk-svg');
         return { input: document.querySelector('.pipebook-walk-input').value,
                  where: document.querySelectorAll('.pipebook-pages-where code')[1].textContent,
                  levels: s.dataset.levels, tables: s.dataset.indices.split(',').length };")
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

/// Whether the page's cards are mounted online, offline or with none.
pub(crate) fn ready_state() -> Query {
    Query::new(
        "ready_state()",
        "return document.documentElement.dataset.pipebookReady",
    )
}

/// Scrolls the element `root` to the middle of the window.
pub(crate) fn scroll_to_center(root: &str) -> Query {
    Query::new(
        format!("scroll_to_center({root})"),
        format!(
            "document.querySelector('{root}').scrollIntoView({{ block: 'center' }}); return true;"
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

/// Opens the shared pipe card's profile point.
pub(crate) fn open_profile_point(root: &str) -> Query {
    Query::new(
        format!("open_profile_point({root})"),
        format!(
            "const d = document.querySelector('{root} details.pipebook-shared-profile-point');
             if (d) d.open = true;
             return true;"
        ),
    )
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

/// The card's warnings.
pub(crate) fn warnings(root: &str) -> Query {
    Query::new(format!("warnings({root})"), format!(
            "return [...document.querySelectorAll('{root} .pipebook-warning')].map((w) => w.textContent);"
        ))
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

/// Whether axe-core is loaded in the page.
pub(crate) fn axe_loaded() -> Query {
    Query::new("axe_loaded()", "return typeof window.axe === 'object';")
}

/// Loads axe-core (its source, `axe`) into the page.
pub(crate) fn load_axe(axe: &str) -> Query {
    Query::new("load_axe()", format!("{axe}\nreturn true;"))
}

/// axe-core's violations on the page.
pub(crate) fn axe_violations() -> Query {
    Query::new(
        "axe_violations()",
        r#"return axe.run(document, { resultTypes: ["violations"] }).then((r) =>
             r.violations.map((v) => ({
               id: v.id,
               impact: v.impact,
               nodes: v.nodes.map((n) => n.target.join(" ") + ": " + n.failureSummary.replace(/\s+/g, " ")),
             })));"#,
    )
}

/// Whether the card at `root` is in `state`.
pub(crate) fn card_in_state(root: &str, state: &str) -> Query {
    Query::new(
        format!("card_in_state({root}, {state})"),
        format!(
            "const r = document.querySelector('{root}');
             return r && r.dataset.state === '{state}';"
        ),
    )
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

/// Types 64 MiB into the IPC card.
pub(crate) fn ipc_bytes_64(ipc: &str) -> Query {
    Query::new(
        format!("ipc_bytes_64({ipc})"),
        format!(
            "const r = document.querySelector('{ipc}');
             r.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-ipc-bytes').value = '64MiB';
             return true;"
        ),
    )
}

/// The state of the card at `ipc`, once it is not idle.
pub(crate) fn card_left_idle(ipc: &str) -> Query {
    Query::new(format!("card_left_idle({ipc})"), format!("const s = document.querySelector('{ipc}').dataset.state; return s === 'idle' ? null : s;"))
}

/// The state of the card at `ipc`, once done or error.
pub(crate) fn card_ended(ipc: &str) -> Query {
    Query::new(format!("card_ended({ipc})"), format!("const s = document.querySelector('{ipc}').dataset.state; return s === 'done' || s === 'error' ? s : null;"))
}

/// Whether the search bar shows and has the focus.
pub(crate) fn search_bar_focused() -> Query {
    Query::new(
        "search_bar_focused()",
        "const bar = document.getElementById('mdbook-searchbar');
         return bar && document.activeElement === bar && bar.offsetParent !== null;",
    )
}

/// The search results' links, once there are any.
pub(crate) fn search_result_links() -> Query {
    Query::new(
        "search_result_links()",
        "const links = [...document.querySelectorAll('#mdbook-searchresults li a')];
         return links.length ? links.map((a) => a.getAttribute('href')) : null;",
    )
}

/// Clicks the first search result.
pub(crate) fn click_first_result() -> Query {
    Query::new(
        "click_first_result()",
        "document.querySelector('#mdbook-searchresults li a').click(); return true;",
    )
}

/// The URL, once the page at `path` has loaded.
pub(crate) fn landed_on(path: &str) -> Query {
    Query::new(
        format!("landed_on({path})"),
        format!(
            "return location.href.includes('{}') && document.readyState === 'complete'
                 ? location.href : null;",
            path
        ),
    )
}

/// How many words the page marks, once one is vmsplice.
pub(crate) fn vmsplice_marked() -> Query {
    Query::new("vmsplice_marked()", "const marks = [...document.querySelectorAll('main mark')].map((m) => m.textContent.toLowerCase());
         return marks.some((m) => m.includes('vmsplice')) ? marks.length : null;")
}

/// Whether the page asked to print.
pub(crate) fn print_asked() -> Query {
    Query::new(
        "print_asked()",
        "return window.__pipebookPrintAsked === true;",
    )
}

/// The cards as printed: how many, and what is wrong with them.
pub(crate) fn printed_cards() -> Query {
    Query::new(
        "printed_cards()",
        r#"const cards = [...document.querySelectorAll(".pipebook-card, .pipebook-results, .pipebook-system, .pipebook-walk")];
           const bad = [];
           for (const card of cards) {
             const text = card.innerText.trim();
             const box = card.getBoundingClientRect();
             const name = card.getAttribute("aria-label") || card.className;
             // Something to read, and no figure left blank.
             if (!box.height || text.length < 40) bad.push(name + ": " + text.slice(0, 80));
             for (const value of card.querySelectorAll(".pipebook-figure-value")) {
               if (value.getBoundingClientRect().height > 0 && !value.textContent.trim()) bad.push(name + ": a blank figure");
             }
             for (const el of card.querySelectorAll("svg, .pipebook-chart, table")) {
               const r = el.getBoundingClientRect();
               if (r.height > 0 && !el.textContent.trim() && !el.querySelector("polyline[points]:not([points='']), rect, path, circle, line")) {
                 bad.push(name + ": an empty " + el.tagName);
               }
             }
           }
           return { cards: cards.length, bad };"#,
    )
}

/// Waits until the page is fully set up: widgets mounted and diagrams rendered.
/// Diagrams are drawn as they come near the screen, so it scrolls to the next one
/// not yet drawn, as a reader would, and back to the top once all are.
pub(crate) fn page_ready() -> Query {
    Query::new(
        "page_ready()",
        r#"
if (document.readyState !== "complete") return false;
// main.js says when every card of the page is mounted ("online", "offline", or
// "no-cards"), on every page.
if (!document.documentElement.dataset.pipebookReady) return false;
const diagrams = document.querySelectorAll("pre.mermaid");
if (diagrams.length && !document.documentElement.dataset.pipebookDiagrams) {
  const next = document.querySelector("pre.mermaid:not([data-pipebook-theme])");
  if (next) next.scrollIntoView({ block: "center" });
  return false;
}
if (diagrams.length && !window.__pipebookScrolledBack) {
  window.__pipebookScrolledBack = true;
  window.scrollTo(0, 0);
}
return true;
"#,
    )
}

/// Everything the page fetched or refers to as a subresource.
pub(crate) fn page_requests() -> Query {
    Query::new(
        "page_requests()",
        r#"
const urls = new Set([location.href]);
for (const e of performance.getEntriesByType("resource")) urls.add(e.name);
for (const el of document.querySelectorAll("script[src], img[src], iframe[src], source[src], video[src], audio[src]")) urls.add(el.src);
for (const el of document.querySelectorAll("link[href]")) {
  if (!["prev", "next", "canonical"].some((r) => el.relList.contains(r))) urls.add(el.href);
}
for (const el of document.querySelectorAll("[style*='url(']")) urls.add(el.getAttribute("style"));
return [...urls];
"#,
    )
}

/// Every aside of the open chapter: probe, answer, default, state, shown.
pub(crate) fn kernel_asides() -> Query {
    Query::new(
        "kernel_asides()",
        "const as = [...document.querySelectorAll('div.pipebook-kernel-branch')];
     return as.length && as.every((a) => a.dataset.kernel)
       ? as.map((a) => ({ probe: a.dataset.probe, answer: a.dataset.answer,
            default: a.hasAttribute('data-default'), state: a.dataset.kernel,
            shown: a.getClientRects().length > 0,
            label: a.querySelector('.pipebook-kernel-branch-label')?.textContent ?? '' }))
       : null;",
    )
}

/// What the page shows of its languages: the picker's links and the suggestion.
pub(crate) fn languages() -> Query {
    Query::new("languages()", "
    const nav = document.querySelector('#mdbook-menu-bar .pipebook-language');
    const links = nav ? [...nav.querySelectorAll('a')].map((a) => ({
      lang: a.lang, hreflang: a.hreflang, path: new URL(a.href).pathname,
      current: a.getAttribute('aria-current'), text: a.textContent,
    })) : null;
    const label = nav && document.getElementById(nav.getAttribute('aria-labelledby'));
    const offer = document.querySelector('main .pipebook-language-suggest');
    return {
      links,
      label: label ? label.textContent : null,
      offer: offer ? { lang: offer.lang, path: new URL(offer.querySelector('a').href).pathname } : null,
      stored: localStorage.getItem('pipebook-language'),
      focused: document.activeElement ? document.activeElement.getAttribute('hreflang') : null,
    };")
}

/// Where the menu bar and the picker's links sit on the page.
pub(crate) fn phone_layout() -> Query {
    Query::new("phone_layout()", "
    const r = (el) => el.getBoundingClientRect();
    const bar = document.getElementById('mdbook-menu-bar');
    const other = r(document.querySelector('.pipebook-language a[hreflang=\"zh-CN\"]'));
    const here = r(document.querySelector('.pipebook-language a[hreflang=\"en\"]'));
    const icon = r(document.getElementById('mdbook-sidebar-toggle'));
    return { width: document.documentElement.clientWidth, bar: r(bar).height, icon: icon.height,
             other: { right: other.right, width: other.width, top: other.top }, hereWidth: here.width };")
}

/// How many characters of a text are Chinese, and how many are Latin letters.
const COUNT_SCRIPTS: &str = "const count = (s) => ({
    cjk: (s.match(/\\p{Script=Han}/gu) || []).length,
    latin: (s.match(/[A-Za-z]/g) || []).length });";

/// What the page shows of its languages, once it offers no other edition.
pub(crate) fn languages_offer_gone() -> Query {
    let languages = languages();
    Query::new(
        "languages_offer_gone()",
        format!(
            "const s = (() => {{ {} }})(); return s.offer === null ? s : null;",
            languages.script()
        ),
    )
}

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

/// The IPC card's state, rate, checksum, result and counts tables, progress, watched mark and status.
pub(crate) fn ipc_card(root: &str) -> Query {
    Query::new(
        format!("ipc_card({root})"),
        format!(
            "const r = document.querySelector('{root}');
         const cells = [...r.querySelectorAll('table.pipebook-ipc-result tr')]
           .map((tr) => [...tr.children].map((c) => c.textContent));
         return {{ state: r.dataset.state, mibs: Number(r.dataset.mibPerS),
                  checksum: r.dataset.checksum ?? null, cells,
                  progress: Number(r.dataset.progressSamples ?? 0),
                  counts: [...r.querySelectorAll('table.pipebook-ipc-counts tr')]
                    .map((tr) => [...tr.children].map((c) => c.textContent)),
                  barHidden: r.querySelector('progress.pipebook-ipc-progress').hidden,
                  watched: r.dataset.watched ?? null,
                  summary: r.querySelector('.pipebook-ipc-summary').textContent,
                  status: r.querySelector('.pipebook-status').textContent }};"
        ),
    )
}

/// The IPC card's state, command, counts table and status, for a run without counts.
pub(crate) fn ipc_counts_off(root: &str) -> Query {
    Query::new(format!("ipc_counts_off({root})"), format!(
        "const r = document.querySelector('{root}');
         return {{ state: r.dataset.state,
                  command: r.querySelector('.pipebook-sweep-command')?.textContent ?? '',
                  missing: [...r.querySelectorAll('.pipebook-ipc-counts-missing li')].map((li) => li.textContent),
                  counts: [...r.querySelectorAll('table.pipebook-ipc-counts tr')]
                    .map((tr) => [...tr.children].map((c) => c.textContent)) }};"
    ))
}

/// The IPC card's state, rate, checksum and status.
pub(crate) fn ipc_files_card(root: &str) -> Query {
    Query::new(
        format!("ipc_files_card({root})"),
        format!(
            "const r = document.querySelector('{root}');
         return {{ state: r.dataset.state, mibs: Number(r.dataset.mibPerS),
                  checksum: r.dataset.checksum ?? null,
                  status: r.querySelector('.pipebook-status').textContent }};"
        ),
    )
}

/// The IPC card's model and result rows.
pub(crate) fn ipc_model(root: &str) -> Query {
    Query::new(
        format!("ipc_model({root})"),
        format!(
            "const r = document.querySelector('{root}');
         const rows = (css) => [...r.querySelectorAll(css)]
           .map((tr) => [...tr.children].map((c) => c.textContent));
         return {{ state: r.dataset.state,
                  counts: rows('table.pipebook-ipc-counts tr'),
                  model: [...r.querySelectorAll('table.pipebook-ipc-model tbody tr')]
                    .map((tr) => ({{ id: tr.dataset.model, verdict: tr.dataset.verdict,
                                    cells: [...tr.children].map((c) => c.textContent) }})) }};"
        ),
    )
}

/// The latency card's state, percentiles, bars and status.
pub(crate) fn latency_card(root: &str) -> Query {
    Query::new(format!("latency_card({root})"), format!(
        "const r = document.querySelector('{root}');
         return {{ state: r.dataset.state, p50: Number(r.dataset.p50), p99: Number(r.dataset.p99),
                  bars: Number(r.dataset.bars ?? 0), rects: r.querySelectorAll('svg.pipebook-latency-dist rect.pipebook-latency-bar').length,
                  progress: Number(r.dataset.progressSamples ?? 0),
                  cells: [...r.querySelectorAll('table.pipebook-latency-result tr')].map((tr) => tr.textContent),
                  status: r.querySelector('.pipebook-status').textContent }};"
    ))
}

/// The latency matrix's state, rows, bars and status.
pub(crate) fn latency_matrix(root: &str) -> Query {
    Query::new(format!("latency_matrix({root})"), format!(
        "const r = document.querySelector('{root}');
         return {{ state: r.dataset.state, rows: Number(r.dataset.rows),
                  rects: r.querySelectorAll('svg.pipebook-latency-dist rect.pipebook-latency-bar').length,
                  table: r.querySelectorAll('table tr').length,
                  note: r.querySelector('.pipebook-latency-matrix-note')?.textContent ?? '',
                  status: r.querySelector('.pipebook-status').textContent }};"
    ))
}

/// The walk's state, its levels and indices, and its error.
pub(crate) fn walk(root: &str) -> Query {
    Query::new(
        format!("walk({root})"),
        format!(
            "const r = document.querySelector('{root}');
         const s = r && r.querySelector('svg.pipebook-walk-svg');
         const e = r && r.querySelector('.pipebook-walk-error');
         return r && {{ state: r.dataset.state, levels: s ? s.dataset.levels : null,
                  indices: s ? s.dataset.indices : null, error: e ? e.textContent : null }};"
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

/// The IPC matrix's state, rows, bars, table and status.
pub(crate) fn ipc_matrix(root: &str) -> Query {
    Query::new(format!("ipc_matrix({root})"), format!(
        "const r = document.querySelector('{root}');
         return {{ state: r.dataset.state, rows: Number(r.dataset.rows),
                  mine: r.querySelectorAll('rect.pipebook-ipc-bar-mine').length,
                  survey: r.querySelectorAll('rect.pipebook-ipc-bar-survey').length,
                  table: r.querySelectorAll('table tr').length,
                  vsSurvey: r.querySelector('tr[data-mechanism=\"pipe-rw\"] td.pipebook-ipc-vs-survey')?.textContent ?? null,
                  status: r.querySelector('.pipebook-status').textContent }};"
    ))
}

/// The page inspector's panels, once each is done or failed: step, state and grid counts.
pub(crate) fn page_panels(root: &str) -> Query {
    Query::new(format!("page_panels({root})"), format!(
        "const panels = [...document.querySelectorAll('{root} .pipebook-pages-panel')];
         if (!panels.length || panels.some((p) => p.dataset.state !== 'done' && p.dataset.state !== 'error')) return null;
         return panels.map((p) => {{
           const g = p.querySelector('svg.pipebook-pages-grid');
           return {{ step: p.dataset.step, state: p.dataset.state,
                    cells: g ? g.querySelectorAll('rect').length : 0,
                    present: g ? Number(g.dataset.present) : null,
                    heads: g ? Number(g.dataset.heads) : null, tails: g ? Number(g.dataset.tails) : null,
                    limits: [...p.querySelectorAll('.pipebook-pages-limit')].map((l) => l.dataset.kind),
                    text: p.textContent.slice(0, 300) }};
         }});"
    ))
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

/// The shared-pipe card's state, points, torn messages, rows, profiles and status.
pub(crate) fn shared_pipe_card(root: &str) -> Query {
    Query::new(format!("shared_pipe_card({root})"), format!(
        "const r = document.querySelector('{root}');
         const rows = [...r.querySelectorAll('table.pipebook-shared-result tr')].slice(1)
           .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent));
         return {{ state: r.dataset.state, points: Number(r.dataset.points ?? 0),
                  torn: r.dataset.torn ?? null, rows,
                  profiles: Number(r.dataset.profiles ?? 0),
                  profilePoints: r.querySelectorAll('details.pipebook-shared-profile-point').length,
                  flames: [...r.querySelectorAll('img.pipebook-flamegraph')].map((i) => i.dataset.role),
                  why: [...r.querySelectorAll('.pipebook-shared-profiles .pipebook-profile-note')].map((n) => n.dataset.kind),
                  status: r.querySelector('.pipebook-status').textContent }};"
    ))
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

/// Types `text` into the walk's address field.
pub(crate) fn walk_type(root: &str, text: &str) -> Query {
    Query::new(
        format!("walk_type({root}, {text})"),
        format!(
            "const i = document.querySelector('{root} input.pipebook-walk-input');
             i.value = '{text}'; i.dispatchEvent(new Event('input')); return true;"
        ),
    )
}

/// `/api/system`, fetched by the page (asynchronous: it calls `done`, the last argument, with the answer).
pub(crate) fn api_system() -> Query {
    Query::new(
        "api_system()",
        "const done = arguments[arguments.length - 1];
             fetch('/api/system').then((r) => r.json()).then(done).catch((e) => done(String(e)));",
    )
}

/// Draws a kernel line for each of `outcomes` (JSON) and one offline with the page's own code; what each line shows (asynchronous: it calls `done`, the last argument, with the answer).
pub(crate) fn draw_kernel_lines(outcomes: &str) -> Query {
    Query::new(
        "draw_kernel_lines()",
        format!(
            "const done = arguments[arguments.length - 1];
                 const outcomes = {outcomes};
                 import('/pipebook/kernel.js').then((m) => {{
                   const host = document.createElement('section');
                   host.id = 'crafted-kernel-lines';
                   document.querySelector('main').prepend(host);
                   const drawn = [];
                   for (const probe of [...outcomes, null]) {{
                     const el = document.createElement('div');
                     el.className = 'pipebook-kernel';
                     el.dataset.probe = probe ? probe.id : 'vmsplice';
                     host.append(el);
                     m.drawKernelLine(el, probe ? {{ behaviour: [probe] }} : null);
                     drawn.push({{ state: el.dataset.state,
                       text: el.querySelector('.pipebook-kernel-text').textContent,
                       evidence: el.querySelector('details')?.textContent ?? '' }});
                   }}
                   host.scrollIntoView();
                   done(drawn);
                 }}).catch((e) => done(String(e)));"
        ),
    )
}

/// Draws the asides for `report` (JSON, as `/api/system` gives it) with the page's own code (asynchronous: it calls `done`, the last argument, with the answer).
pub(crate) fn draw_branches(report: &serde_json::Value) -> Query {
    Query::new(
        "draw_branches()",
        format!(
            "const done = arguments[arguments.length - 1];
                     import('/pipebook/kernel.js').then((m) => {{
                       m.drawBranches(document, {report});
                       document.querySelector('div.pipebook-kernel-branch').scrollIntoView();
                       done(true);
                     }}).catch((e) => done(String(e)));"
        ),
    )
}

/// Whether each run of the choose-ipc lab in `/api/labs` was watched (asynchronous: it calls `done`, the last argument, with the answer).
pub(crate) fn lab_runs_watched() -> Query {
    Query::new("lab_runs_watched()", "const done = arguments[arguments.length - 1];
             fetch('/api/labs').then((r) => r.json())
               .then((s) => done(s.labs['choose-ipc'].measurements.map((m) => m.result.watched ?? null)))
               .catch((e) => done('error: ' + e));")
}

/// The lab card's JSON export, fetched from the link it offers: status, href, disposition and text (asynchronous: it calls `done`, the last argument, with the answer).
pub(crate) fn lab_export_json(root: &str) -> Query {
    Query::new(format!("lab_export_json({root})"), format!(
                "const done = arguments[arguments.length - 1];
                 const a = document.querySelector('{root} a.pipebook-lab-export-json');
                 fetch(a.href).then(async (r) => done({{ status: r.status, href: a.getAttribute('href'),
                   disposition: r.headers.get('content-disposition'), text: await r.text() }}))
                   .catch((e) => done({{ error: String(e) }}));"
            ))
}

/// How many results of `step` `/api/results` holds, fetched by the page (asynchronous: it calls `done`, the last argument, with the answer).
pub(crate) fn history_runs(step: &str) -> Query {
    Query::new(
        format!("history_runs({step})"),
        format!(
            "const done = arguments[arguments.length - 1];
                 fetch('/api/results').then((r) => r.json())
                   .then((all) => done(all.filter((r) => r.step === '{step}').length))
                   .catch((e) => done(String(e)));"
        ),
    )
}
