//! Queries of the page as a whole, any chapter: loading, diagrams, themes,
//! languages and editions, search and print, the back/forward cache, axe-core,
//! and a card's state read the same way for every card.

use super::Query;

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

/// The line above the search results and how many results are listed.
pub(crate) fn search_header() -> Query {
    Query::new(
        "search_header()",
        "return { text: document.getElementById('mdbook-searchresults-header').textContent,
                  count: document.querySelectorAll('#mdbook-searchresults > li').length };",
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

/// Empties the page's localStorage.
pub(crate) fn clear_storage() -> Query {
    Query::new("clear_storage()", "localStorage.clear(); return true;")
}

/// Whether the page has an element `css`.
pub(crate) fn exists(css: &str) -> Query {
    Query::new(
        format!("exists({css})"),
        format!("return !!document.querySelector('{css}');"),
    )
}

/// Scrolls to the top of the page.
pub(crate) fn scroll_to_top() -> Query {
    Query::new("scroll_to_top()", "window.scrollTo(0, 0); return true;")
}

/// The browser's user agent.
pub(crate) fn user_agent() -> Query {
    Query::new("user_agent()", "return navigator.userAgent;")
}

/// The page's path.
pub(crate) fn location_path() -> Query {
    Query::new("location_path()", "return location.pathname;")
}

/// The Content-Security-Policy violations the recorder saw.
pub(crate) fn csp_violations() -> Query {
    Query::new("csp_violations()", "return window.__pipebookCsp || []")
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

/// The card's warnings.
pub(crate) fn warnings(root: &str) -> Query {
    Query::new(format!("warnings({root})"), format!(
            "return [...document.querySelectorAll('{root} .pipebook-warning')].map((w) => w.textContent);"
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

/// `/api/system`, fetched by the page (asynchronous: it calls `done`, the last argument, with the answer).
pub(crate) fn api_system() -> Query {
    Query::new(
        "api_system()",
        "const done = arguments[arguments.length - 1];
             fetch('/api/system').then((r) => r.json()).then(done).catch((e) => done(String(e)));",
    )
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
