//! Queries of the IPC and latency cards (one mechanism, the matrices), the
//! shared-pipe card and the paging chapter's walk and page inspector.

use super::Query;

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

/// Walks the second panel's address; what the walk shows.
pub(crate) fn walk_second_panel() -> Query {
    Query::new("walk_second_panel()", "document.querySelectorAll('.pipebook-pages-panel')[1].querySelector('button.pipebook-pages-walk').click();
         const s = document.querySelector('.pipebook-walk svg.pipebook-walk-svg');
         return { input: document.querySelector('.pipebook-walk-input').value,
                  where: document.querySelectorAll('.pipebook-pages-where code')[1].textContent,
                  levels: s.dataset.levels, tables: s.dataset.indices.split(',').length };")
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
