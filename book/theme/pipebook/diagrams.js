// Renders <pre class="mermaid"> diagrams with the vendored Mermaid (vendor/mermaid/, its
// ES-module build; vendor/mermaid.min.js when the book is opened from files).
// A classic deferred script, not a module, so diagrams also render when the book is
// opened from files (browsers refuse module scripts on file://). Picks Mermaid's theme
// from mdBook's theme class on <html> and re-renders when the reader switches theme.
//
// Lazily: Mermaid is fetched only when a diagram comes near the screen, and
// each diagram is drawn as it comes near, so no diagram holds up the first paint or
// the page's first seconds on a phone. The print view draws them all at once.
(function () {
  "use strict";
  var DARK = ["coal", "navy", "ayu"];
  var LIGHT = ["light", "rust"];

  function mdbookTheme() {
    var cls = document.documentElement.classList;
    for (var i = 0; i < DARK.length; i++) if (cls.contains(DARK[i])) return DARK[i];
    for (var j = 0; j < LIGHT.length; j++) if (cls.contains(LIGHT[j])) return LIGHT[j];
    return "light";
  }

  function mermaidTheme() {
    return DARK.indexOf(mdbookTheme()) >= 0 ? "dark" : "default";
  }

  // Mermaid shrinks a diagram to the column's width; a wide one would end up with tiny
  // text. Never shrink below MIN_SCALE: let the block scroll sideways instead.
  var MIN_SCALE = 0.7;
  function keepReadable(pre) {
    var svgEl = pre.querySelector("svg");
    if (!svgEl || !svgEl.viewBox || !svgEl.viewBox.baseVal) return;
    var natural = svgEl.viewBox.baseVal.width;
    var room = pre.clientWidth;
    if (natural > 0 && room > 0 && natural * MIN_SCALE > room) {
      svgEl.style.maxWidth = "none";
      svgEl.style.width = Math.round(natural * MIN_SCALE) + "px";
      pre.classList.add("pipebook-diagram-wide");
      markScrollable(pre, "Wide diagram: scroll sideways to see all of it");
      var next = pre.nextElementSibling;
      if (!next || !next.classList.contains("pipebook-diagram-hint")) {
        var hint = document.createElement("p");
        hint.className = "pipebook-diagram-hint";
        hint.textContent = "This diagram is wider than the page: scroll it sideways to see the rest \u2192";
        pre.insertAdjacentElement("afterend", hint);
      }
    }
    markScrollable(pre, "Diagram: scroll sideways to see all of it");
  }

  // A block that scrolls sideways must take the keyboard's focus (arrow keys then
  // scroll it), and a focusable element needs a role to carry its name.
  function markScrollable(el, label) {
    if (el.scrollWidth <= el.clientWidth + 1) return;
    // Never take over an element made focusable by someone else; relabel our own.
    if (el.hasAttribute("tabindex") && !el.hasAttribute("data-pipebook-scrollable")) return;
    el.setAttribute("data-pipebook-scrollable", "");
    el.setAttribute("tabindex", "0");
    el.setAttribute("role", "group");
    el.setAttribute("aria-label", label);
  }

  // Code listings and tables too wide for the column (every page, the print view
  // included; a phone's column is narrow), and diagrams still shown as their source.
  // All sizes are read first and the attributes written after: a write between two reads
  // would make the browser lay the page out again for each block.
  function markScrollableCode() {
    var blocks = document.querySelectorAll("main pre, main pre:not(.mermaid) > code, main .table-wrapper");
    var wide = [];
    for (var i = 0; i < blocks.length; i++) {
      if (blocks[i].scrollWidth > blocks[i].clientWidth + 1) wide.push(blocks[i]);
    }
    for (var j = 0; j < wide.length; j++) {
      var what = wide[j].classList.contains("mermaid")
        ? "Diagram source"
        : wide[j].classList.contains("table-wrapper")
          ? "Table"
          : "Code";
      markScrollable(wide[j], what + ": scroll sideways to see all of it");
    }
  }

  // After the first paint: reading a size before it would make the browser lay the page
  // out inside this script, on top of the layout the paint does anyway.
  function afterPaint(fn) {
    if (!window.requestAnimationFrame) return setTimeout(fn, 0);
    requestAnimationFrame(function () {
      setTimeout(fn, 0);
    });
  }

  var rendering = Promise.resolve();
  var current = null;

  // The diagrams due to be drawn: those that came near the screen (or all, in print).
  var due = [];
  var total = 0;
  // Those that have been through Mermaid (drawn, or shown as source when broken).
  var finished = [];

  function render(themeChanged) {
    var mermaid = window.mermaid;
    if (!mermaid) return;
    var theme = mermaidTheme();
    if (themeChanged && theme === current) return;
    current = theme;
    // On a theme change every drawn diagram is drawn again; otherwise only the new ones.
    var blocks = due.filter(function (pre) {
      return themeChanged || pre.getAttribute("data-pipebook-theme") !== theme;
    });
    if (!blocks.length) return;
    blocks.forEach(function (pre) {
      pre.setAttribute("data-pipebook-theme", theme);
    });
    // Mermaid sizes boxes by measuring text: wait for the book's fonts, or labels
    // measured in a fallback font overflow once the real one arrives.
    var fontsReady = document.fonts && document.fonts.ready ? document.fonts.ready : Promise.resolve();
    rendering = rendering
      .then(function () {
        return fontsReady;
      })
      .then(function () {
        mermaid.initialize({
          startOnLoad: false,
          securityLevel: "strict",
          theme: theme,
          fontFamily: '"Open Sans", "Helvetica Neue", Arial, sans-serif',
        });
        var good = [];
        var broken = 0;
        var checks = blocks.map(function (pre) {
          if (!pre.hasAttribute("data-source")) pre.setAttribute("data-source", pre.textContent);
          var source = pre.getAttribute("data-source");
          pre.removeAttribute("data-processed");
          pre.textContent = source;
          // Parse first: a diagram with a syntax error stays readable as its source,
          // with a note, instead of Mermaid's full-width error picture.
          return mermaid.parse(source).then(
            function () {
              good.push(pre);
            },
            function (err) {
              broken += 1;
              markBroken(pre, err);
            },
          );
        });
        return Promise.all(checks)
          .then(function () {
            return good.length ? mermaid.run({ nodes: good, suppressErrors: true }) : null;
          })
          .then(function () {
            for (var k = 0; k < good.length; k++) {
              var drawn = good[k].querySelector("svg");
              // Mermaid draws its error picture when rendering (not parsing) fails.
              if (!drawn || drawn.getAttribute("aria-roledescription") === "error") {
                broken += 1;
                good[k].textContent = good[k].getAttribute("data-source");
                markBroken(good[k], "Mermaid could not render it");
              } else {
                keepReadable(good[k]);
              }
            }
            var root = document.documentElement;
            var errors = Number(root.getAttribute("data-pipebook-diagram-errors") || 0);
            root.setAttribute("data-pipebook-diagram-errors", String(themeChanged ? broken : errors + broken));
            // Set once every diagram of the page is drawn (tests and print wait for it).
            blocks.forEach(function (pre) {
              if (finished.indexOf(pre) < 0) finished.push(pre);
            });
            if (finished.length === total) root.setAttribute("data-pipebook-diagrams", theme);
          });
      })
      .catch(function (err) {
        document.documentElement.setAttribute("data-pipebook-diagrams", "error");
        if (window.console) console.error("pipebook: mermaid", err);
      });
  }

  function markBroken(pre, err) {
    var message = String((err && (err.message || err.str)) || err || "syntax error");
    pre.classList.add("pipebook-diagram-error");
    pre.setAttribute("data-error", message);
    var next = pre.nextElementSibling;
    if (!next || !next.classList.contains("pipebook-diagram-note")) {
      var note = document.createElement("p");
      note.className = "pipebook-diagram-note";
      note.textContent = "This diagram could not be drawn (" + message.split("\n")[0] + "); its source is shown above.";
      pre.insertAdjacentElement("afterend", note);
    }
    if (window.console) console.warn("pipebook: diagram not drawn:", message);
  }

  // Where the vendored Mermaid lives, relative to this script. Served, the page imports
  // Mermaid's ES-module build, which fetches only the code of the diagram kinds on the
  // page (about half a megabyte for a flowchart and a sequence diagram, a third of the
  // main thread's time); opened from files, where browsers refuse modules, it loads the
  // 3.5 MB single-file build.
  var ME = document.currentScript && document.currentScript.src;
  var FROM_FILES = location.protocol === "file:";
  var MERMAID_SRC = ME
    ? ME.replace(/pipebook\/diagrams\.js(\?.*)?$/, FROM_FILES ? "vendor/mermaid.min.js" : "vendor/mermaid/mermaid.esm.min.mjs")
    : null;

  // Fetched only when a diagram comes near the screen, once.
  var loading = null;
  function loadMermaid(then) {
    if (window.mermaid) return then();
    if (!MERMAID_SRC) return;
    if (loading) return loading.push(then);
    loading = [then];
    var loaded = function () {
      // Mermaid renders every .mermaid element on window load unless told not to;
      // we render ourselves (after the fonts, with the page's theme).
      if (window.mermaid) window.mermaid.initialize({ startOnLoad: false });
      var waiting = loading;
      loading = [];
      for (var i = 0; i < waiting.length; i++) waiting[i]();
      new MutationObserver(function () {
        render(true);
      }).observe(document.documentElement, { attributes: true, attributeFilter: ["class"] });
    };
    var failed = function () {
      document.documentElement.setAttribute("data-pipebook-diagrams", "error");
    };
    if (!FROM_FILES) {
      import(MERMAID_SRC).then(function (module) {
        window.mermaid = module.default;
        loaded();
      }, failed);
      return;
    }
    var script = document.createElement("script");
    script.src = MERMAID_SRC;
    script.onload = loaded;
    script.onerror = failed;
    document.head.appendChild(script);
  }

  function start() {
    afterPaint(markScrollableCode);
    // A turned phone or a resized window can make more blocks scroll.
    var resizing = null;
    window.addEventListener("resize", function () {
      clearTimeout(resizing);
      resizing = setTimeout(markScrollableCode, 200);
    });
    // Keep every diagram's source before anything can replace it with a drawing.
    var blocks = document.querySelectorAll("pre.mermaid");
    if (!blocks.length) return;
    for (var i = 0; i < blocks.length; i++) {
      if (!blocks[i].hasAttribute("data-source")) blocks[i].setAttribute("data-source", blocks[i].textContent);
    }
    total = blocks.length;
    var draw = function (pre) {
      if (due.indexOf(pre) >= 0) return;
      due.push(pre);
      loadMermaid(function () {
        render(false);
      });
    };
    var printing = /\/print\.html$/.test(location.pathname);
    if (printing || !("IntersectionObserver" in window)) {
      // The print view is printed whole: draw every diagram, once the page has loaded.
      var all = function () {
        Array.prototype.forEach.call(blocks, draw);
      };
      if (document.readyState === "complete") all();
      else window.addEventListener("load", all, { once: true });
      return;
    }
    // Drawn as it scrolls into view: a diagram just below the fold does not make a
    // phone fetch and compile Mermaid before the reader asked for it.
    var observer = new IntersectionObserver(
      function (entries) {
        entries.forEach(function (entry) {
          if (!entry.isIntersecting) return;
          observer.unobserve(entry.target);
          draw(entry.target);
        });
      },
      { rootMargin: "0px" },
    );
    Array.prototype.forEach.call(blocks, function (pre) {
      observer.observe(pre);
    });
    // Someone about to print from a chapter gets every diagram.
    window.addEventListener("beforeprint", function () {
      Array.prototype.forEach.call(blocks, draw);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
