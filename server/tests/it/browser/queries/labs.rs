//! Queries of the lab cards, the kernel lines and asides, and the machine
//! page's findings and wake-up measure.

use super::Query;

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
