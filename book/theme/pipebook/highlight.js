// Colours the book's listings with highlight.js: the core and only the grammars the book
// uses (about 30 KiB instead of the 130 KiB of every common language mdBook ships).
// book.js imports this module, and only on a page that has a listing in a language.

import hljs from "../vendor/highlight/core.min.js";
import bash from "../vendor/highlight/languages/bash.min.js";
import c from "../vendor/highlight/languages/c.min.js";
import rust from "../vendor/highlight/languages/rust.min.js";
import shell from "../vendor/highlight/languages/shell.min.js";

hljs.registerLanguage("bash", bash);
hljs.registerLanguage("c", c);
hljs.registerLanguage("rust", rust);
hljs.registerLanguage("shell", shell);
// A listing names its language; never guess one for a listing that does not.
hljs.configure({ languages: [] });

// How long one slice may hold the main thread, in ms: then the browser gets it back
// (a chapter with many listings otherwise blocks a phone for a good part of a second).
const SLICE_MS = 8;

// Highlights `blocks` (code elements) a slice at a time.
export function highlightInSlices(blocks) {
  let next = 0;
  const slice = () => {
    const until = performance.now() + SLICE_MS;
    while (next < blocks.length && performance.now() < until) {
      hljs.highlightElement(blocks[next]);
      next += 1;
    }
    if (next < blocks.length) setTimeout(slice, 0);
  };
  slice();
}
