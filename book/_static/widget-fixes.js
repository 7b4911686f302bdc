// Loaded on pages with widgets, before the ipywidgets HTML manager (_config.yml:
// nb_ipywidgets_js).
// 1. The manager typesets widget labels with MathJax 2's MathJax.Hub.Queue; the book loads
//    MathJax 3, which has no Hub, so every widget threw "Cannot read properties of undefined
//    (reading 'Queue')". Give MathJax 3 the one Hub call the manager makes.
// 2. A slider's handle (role="slider") has no accessible name: name it by the label written
//    beside it (the ε of "ε ——o—— 0.5"), as WCAG 4.1.2 asks.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", function () {
    var mj = window.MathJax;
    if (mj && mj.version && !mj.Hub) {
      mj.Hub = {
        Queue: function (job) {
          var element = job && job[2];
          if (element && mj.startup && mj.startup.promise) {
            mj.startup.promise = mj.startup.promise.then(function () {
              return mj.typesetPromise([element]);
            });
          }
        },
      };
    }
  });

  function nameSliders(root) {
    root.querySelectorAll(".widget-slider").forEach(function (slider) {
      var label = slider.querySelector(".widget-label");
      var name = label ? label.textContent.trim() : "";
      slider.querySelectorAll('[role="slider"]').forEach(function (handle) {
        if (!handle.getAttribute("aria-label") && name) {
          handle.setAttribute("aria-label", name);
        }
      });
    });
  }

  new MutationObserver(function () { nameSliders(document); })
    .observe(document.documentElement, { childList: true, subtree: true });
})();
