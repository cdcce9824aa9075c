// How the page talks to the local runner: same origin only, nothing else leaves the page.

/** The per-start token the server injects into the pages it serves (absent on a static copy). */
export function pageToken() {
  const meta = document.querySelector('meta[name="pipebook-token"]');
  const token = meta ? meta.getAttribute("content") : null;
  return token && token.trim() ? token.trim() : null;
}

/**
 * Whether this page's token is still the server's: false when the server now serves
 * the page with another token (it was restarted since this page was loaded, and will
 * refuse the old one), null when that cannot be told (no token, no server).
 */
export async function tokenIsCurrent() {
  const mine = pageToken();
  if (!mine || (location.protocol !== "http:" && location.protocol !== "https:")) return null;
  try {
    const response = await fetch(location.href, { cache: "no-store", credentials: "same-origin" });
    if (!response.ok) return null;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const theirs = page.querySelector('meta[name="pipebook-token"]')?.getAttribute("content")?.trim();
    return theirs ? theirs === mine : null;
  } catch {
    return null;
  }
}

export async function getJSON(path) {
  const response = await fetch(path, {
    headers: { Accept: "application/json" },
    cache: "no-store",
    credentials: "same-origin",
  });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

const cache = new Map();

function once(key, load) {
  if (!cache.has(key)) cache.set(key, load());
  return cache.get(key);
}

/** `path`'s JSON from the runner, fetched once a page (under `key`), or null without a runner. */
function fromRunner(key, path) {
  return once(key, async () => {
    if (!(await runnerAvailable())) return null;
    try {
      return await getJSON(path);
    } catch {
      return null;
    }
  });
}

/** True when this page was served by a live runner (token present and /api/health answers). */
export function runnerAvailable() {
  return once("health", async () => {
    if (location.protocol !== "http:" && location.protocol !== "https:") return false;
    if (!pageToken()) return false;
    try {
      await getJSON("/api/health");
      return true;
    } catch {
      return false;
    }
  });
}

/** The step catalog, or null without a runner. */
export function catalog() {
  return once("steps", async () => {
    if (!(await runnerAvailable())) return null;
    try {
      const data = await getJSON("/api/steps");
      return Array.isArray(data) ? data : Array.isArray(data?.steps) ? data.steps : null;
    } catch {
      return null;
    }
  });
}

/**
 * The bounds and first values of the cards' own fields (/api/params: compare pairs and
 * budget, latency round trips, sweep runs per value), or null without a runner. The
 * server checks the same messages with the same figures, so the page types none.
 */
export function pageParams() {
  return fromRunner("params", "/api/params");
}

/** The IPC lab's mechanisms and parameter bounds (/api/ipc), or null without a runner. */
export function ipcLab() {
  return fromRunner("ipc", "/api/ipc");
}

/** The runner's tool table (/api/tools: id, title, program, present, sides), or null without a runner. */
export function toolTable() {
  return fromRunner("tools", "/api/tools");
}

/** The tuned variants the runner's searches found since it started (fresh each call), or []. */
export async function tunedVariants() {
  if (!(await runnerAvailable())) return [];
  try {
    const data = await getJSON("/api/tuned");
    return Array.isArray(data) ? data : [];
  } catch {
    return [];
  }
}

export function system() {
  return once("system", async () => ((await runnerAvailable()) ? getJSON("/api/system") : null));
}

/** The server's results history (fresh each call), or [] without a runner. */
export async function history() {
  if (!(await runnerAvailable())) return [];
  try {
    const data = await getJSON("/api/results");
    return Array.isArray(data) ? data : Array.isArray(data?.results) ? data.results : [];
  } catch {
    return [];
  }
}

/**
 * The runner's judgement of two sets of figures (/api/judge with `query`, a
 * URLSearchParams string): {judgement}, {offline: true} without a runner, or
 * {error} with what the runner said. Asked once a page per query: the same
 * figures always get the same answer.
 */
export function judgement(query) {
  return once(`judge?${query}`, async () => {
    if (!(await runnerAvailable())) return { offline: true };
    try {
      const response = await fetch(`/api/judge?${query}`, { headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin" });
      const body = await response.json().catch(() => null);
      if (!response.ok) return { error: body?.error?.message ?? body?.message ?? body?.error ?? `HTTP ${response.status}` };
      return { judgement: body };
    } catch (err) {
      return { error: err.message };
    }
  });
}

/** Every lab's prediction and measurements from the runner, or null without one. */
export async function labState() {
  if (!(await runnerAvailable())) return null;
  return getJSON("/api/labs");
}

/** Where the lab report downloads from. */
export function labReportUrl(format, student) {
  return `/api/labs/report.${format}?student=${encodeURIComponent(student)}`;
}

export function runSocketUrl(token) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/api/run?token=${encodeURIComponent(token)}`;
}

export const START_HINT = {
  command: "cargo run --release",
  url: "http://127.0.0.1:8000",
};

/** The machine check before a comparison or a lab (/api/precheck): advice sentences, or null. */
export async function precheck() {
  if (!(await runnerAvailable())) return null;
  try {
    const data = await getJSON("/api/precheck");
    return Array.isArray(data?.advice) ? data.advice : null;
  } catch {
    return null;
  }
}
