// The book's own script, on every page (_config.yml: html_js_files); its CSS is book.css.
// Once MathJax has typeset the page, find the formulas wider than the column. Inline ones
// are made to scroll on their own (.wide-inline-math) instead of being cut off by their box;
// every formula that scrolls (display or inline) gets a visible cue (.math-scrolls: a shadow
// on the side where more is hidden, .math-scrolled-end once scrolled to the right end).
// Code blocks (code cells, their output): each line becomes a .code-line block with a
// hanging indent, so that a line too long for the column wraps (book.css) and its
// continuation is indented past the line's own indentation. The text is unchanged (each
// line keeps its newline), so copying a cell copies the same code.
(function () {
  "use strict";

  // Extra indent, in characters, of the continuation of a wrapped line.
  var HANG = 4;

  function closeLine(pre, line) {
    var text = line.textContent.replace(/\n$/, "");
    var indent = text.length - text.replace(/^[ \t]+/, "").length;
    line.className = "code-line";
    // (at most a third of the column, for deeply indented lines on a phone)
    var hang = "min(" + (indent + HANG) + "ch, 33%)";
    line.style.paddingLeft = hang;
    line.style.textIndent = "calc(-1 * " + hang + ")";
    pre.appendChild(line);
  }

  // Split the <pre> of one code block into lines. Pygments writes flat spans (one token
  // each), so a token that holds a newline (a multi-line string) is cut into one copy of
  // its span per line.
  function splitLines(pre) {
    if (pre.dataset.codeLines) return;
    pre.dataset.codeLines = "1";
    var nodes = Array.prototype.slice.call(pre.childNodes);
    var line = document.createElement("span");
    nodes.forEach(function (node) {
      pre.removeChild(node);
      var parts = node.textContent.split("\n");
      if (parts.length === 1 || (node.nodeType === 1 && node.children.length)) {
        line.appendChild(node);
        return;
      }
      parts.forEach(function (part, i) {
        var last = i === parts.length - 1;
        var text = last ? part : part + "\n";
        if (text) {
          var piece = node.nodeType === 1 ? node.cloneNode(false) : document.createTextNode("");
          piece.textContent = text;
          line.appendChild(piece);
        }
        if (!last) {
          closeLine(pre, line);
          line = document.createElement("span");
        }
      });
    });
    if (line.childNodes.length) closeLine(pre, line);
  }

  // A box that scrolls, and by more than a glyph's overhang (a few pixels).
  function markScrolling(box) {
    var overflow = getComputedStyle(box).overflowX;
    var scrolls = (overflow === "auto" || overflow === "scroll") &&
      box.scrollWidth > box.clientWidth + 4;
    box.classList.toggle("math-scrolls", scrolls);
    box.classList.toggle("math-scrolled-end",
      scrolls && box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
    if (scrolls && !box.dataset.mathCue) {
      box.dataset.mathCue = "1";
      box.addEventListener("scroll", function () { markScrolling(box); }, { passive: true });
    }
  }

  function markAll() {
    document.querySelectorAll(".bd-article mjx-container:not([display='true'])")
      .forEach(function (math) {
        math.classList.remove("wide-inline-math");
        var box = math.parentElement;
        if (box && math.getBoundingClientRect().width > box.getBoundingClientRect().width + 1) {
          math.classList.add("wide-inline-math");
        }
      });
    document.querySelectorAll(".bd-article div.math, .bd-article mjx-container")
      .forEach(markScrolling);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".bd-article div.highlight > pre").forEach(splitLines);
    var mj = window.MathJax;
    if (!mj || !mj.startup || !mj.startup.promise) return;
    mj.startup.promise.then(markAll);
    var pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(markAll, 150);
    });
  });
})();
