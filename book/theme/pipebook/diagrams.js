// Renders <pre class="mermaid"> diagrams with the vendored Mermaid (vendor/mermaid.min.js).
// A classic deferred script, not a module, so diagrams also render when the book is
// opened from files (browsers refuse module scripts on file://). Picks Mermaid's theme
// from mdBook's theme class on <html> and re-renders when the reader switches theme.
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
      pre.setAttribute("tabindex", "0");
      pre.setAttribute("aria-label", "Wide diagram: scroll sideways to see all of it");
      var next = pre.nextElementSibling;
      if (!next || !next.classList.contains("pipebook-diagram-hint")) {
        var hint = document.createElement("p");
        hint.className = "pipebook-diagram-hint";
        hint.textContent = "This diagram is wider than the page: scroll it sideways to see the rest \u2192";
        pre.insertAdjacentElement("afterend", hint);
      }
    }
  }

  var rendering = Promise.resolve();
  var current = null;

  function render() {
    var mermaid = window.mermaid;
    var blocks = document.querySelectorAll("pre.mermaid");
    if (!mermaid || !blocks.length) return;
    var theme = mermaidTheme();
    if (theme === current) return;
    current = theme;
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
        var checks = Array.prototype.map.call(blocks, function (pre) {
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
            document.documentElement.setAttribute("data-pipebook-diagram-errors", String(broken));
            document.documentElement.setAttribute("data-pipebook-diagrams", theme);
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

  // Where the vendored Mermaid lives, relative to this script (works from a server
  // and from files alike).
  var MERMAID_SRC = (function () {
    var me = document.currentScript && document.currentScript.src;
    return me ? me.replace(/pipebook\/diagrams\.js(\?.*)?$/, "vendor/mermaid.min.js") : null;
  })();

  // The 3.5 MB bundle is fetched only by pages that have a diagram.
  function loadMermaid(then) {
    if (window.mermaid) return then();
    if (!MERMAID_SRC) return;
    var script = document.createElement("script");
    script.src = MERMAID_SRC;
    script.onload = function () {
      // Mermaid renders every .mermaid element on window load unless told not to;
      // we render ourselves (after the fonts, with the page's theme).
      if (window.mermaid) window.mermaid.initialize({ startOnLoad: false });
      then();
    };
    script.onerror = function () {
      document.documentElement.setAttribute("data-pipebook-diagrams", "error");
    };
    document.head.appendChild(script);
  }

  function start() {
    // Keep every diagram's source before anything can replace it with a drawing.
    var blocks = document.querySelectorAll("pre.mermaid");
    if (!blocks.length) return;
    for (var i = 0; i < blocks.length; i++) {
      if (!blocks[i].hasAttribute("data-source")) blocks[i].setAttribute("data-source", blocks[i].textContent);
    }
    var go = function () {
      loadMermaid(function () {
        render();
        new MutationObserver(render).observe(document.documentElement, {
          attributes: true,
          attributeFilter: ["class"],
        });
      });
    };
    // Text first: the bundle is fetched and compiled once the page has loaded, so
    // it never holds up reading; the diagrams appear a moment later.
    if (document.readyState === "complete") go();
    else window.addEventListener("load", go, { once: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
