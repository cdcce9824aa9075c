// Tiny DOM helper: h("div.a.b", {attrs}, ...children). Text is always set as text,
// never parsed as HTML, so catalog and server strings cannot inject markup.

import { t, withNodes } from "./i18n.js";

export function h(tag, attrs, ...children) {
  const [name, ...classes] = tag.split(".");
  const el = document.createElement(name || "div");
  if (classes.length) el.className = classes.join(" ");
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "dataset") Object.assign(el.dataset, value);
      else if (key.startsWith("on") && typeof value === "function") {
        el.addEventListener(key.slice(2), value);
      } else if (value === true) el.setAttribute(key, "");
      else el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces all children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** How to start the runner, as a paragraph: `what` says what the reader would do
 * with it, `then` what to do once it runs (both plain text or nodes). */
export function offlineHint(what, hint, ...then) {
  return h(
    "p.pipebook-offline",
    null,
    withNodes(t("{what}, start the runner in the project folder with {command}, then open {url}"), {
      what,
      command: h("code", null, hint.command),
      url: h("a", { href: hint.url }, hint.url),
    }),
    ...then,
  );
}

export const SVG_NS = "http://www.w3.org/2000/svg";

export function svg(tag, attrs) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) el.setAttribute(key, String(value));
  return el;
}

/**
 * Appends to `axis` a horizontal grid line from x1 to x2 and a label just left of
 * x1 for each tick ({y, label}): the y axis every chart of the page draws alike.
 */
export function yGrid(axis, ticks, { x1, x2, gridClass }) {
  for (const tick of ticks) {
    axis.append(svg("line", { class: gridClass, x1, y1: tick.y, x2, y2: tick.y }));
    const label = svg("text", { x: x1 - 6, y: tick.y + 4, "text-anchor": "end" });
    label.textContent = tick.label;
    axis.append(label);
  }
}
