// What a card's status line says to a screen reader. The visible line changes with
// every progress message (20 a second while a run streams); read out at that rate it
// would drown everything else. So the visible line is not a live region itself: a
// visually hidden one beside it repeats it politely, at once when the card's state
// changes (queued, running, done, error, ...) and otherwise at most every
// ANNOUNCE_EVERY_MS. The decision is pure (`nextAnnouncement`); `statusLine` wires it.

export const ANNOUNCE_EVERY_MS = 10000;

/** What to announce now, or null: `last` is the previous announcement
 * `{state, text, at}` (null before the first), `now` in ms. */
export function nextAnnouncement(last, { state, text, now }, every = ANNOUNCE_EVERY_MS) {
  const said = String(text ?? "").trim();
  if (!said) return null;
  if (!last || last.state !== state) return { state, text: said, at: now };
  if (said === last.text || now - last.at < every) return null;
  return { state, text: said, at: now };
}

/** A card's visible status line (`p.pipebook-status`, `data-state` as given) whose
 * changes a hidden live region, inserted right after it, announces throttled. */
export function statusLine(dataset) {
  const line = document.createElement("p");
  line.className = "pipebook-status";
  Object.assign(line.dataset, dataset);
  const region = document.createElement("p");
  region.className = "pipebook-visually-hidden";
  region.setAttribute("role", "status");
  let last = null;
  let pending = null;
  const say = () => {
    pending = null;
    const next = nextAnnouncement(last, { state: line.dataset.state, text: line.textContent, now: Date.now() });
    if (!next) {
      // A change held back: say the latest text once the interval is over.
      if (last && line.textContent.trim() !== last.text) {
        pending = setTimeout(say, Math.max(0, last.at + ANNOUNCE_EVERY_MS - Date.now()));
      }
      return;
    }
    last = next;
    if (!region.isConnected && line.isConnected) line.after(region);
    region.textContent = next.text;
  };
  new MutationObserver(() => {
    if (pending === null) say();
  }).observe(line, { childList: true, characterData: true, subtree: true, attributes: true, attributeFilter: ["data-state"] });
  return line;
}
