// The book's own script, on every page (_config.yml: html_js_files); its CSS is book.css.
// Once MathJax has typeset the page, find the formulas wider than the column. Inline ones
// are made to scroll on their own (.wide-inline-math) instead of being cut off by their box;
// every formula that scrolls (display or inline) gets a visible cue (.math-scrolls: a shadow
// on the side where more is hidden, .math-scrolled-end once scrolled to the right end).
(function () {
  "use strict";

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
