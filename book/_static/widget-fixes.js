// Loaded on pages with widgets, before the ipywidgets HTML manager (_config.yml:
// nb_ipywidgets_js).
// 1. The manager typesets widget labels with MathJax 2's MathJax.Hub.Queue; the book loads
//    MathJax 3, which has no Hub, so every widget threw "Cannot read properties of undefined
//    (reading 'Queue')". Give MathJax 3 the one Hub call the manager makes.
// 2. A slider's handle (role="slider") has no accessible name: name it by the label written
//    beside it (the ε of "ε ——o—— 0.5"), as WCAG 4.1.2 asks.
// 3. Radio buttons (dpkit.widgets shows categories so) are drawn as unrelated radios: make
//    each widget's radios one group (a shared name: Tab reaches the chosen one, the arrow
//    keys move the choice, as in any form) named by its label (role="radiogroup").
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

  var groups = 0;
  function groupRadios(root) {
    root.querySelectorAll(".widget-radio").forEach(function (widget) {
      var box = widget.querySelector(".widget-radio-box");
      if (!box) return;
      if (!box.dataset.group) {
        groups += 1;
        box.dataset.group = "dpkit-choice-" + groups;
        box.setAttribute("role", "radiogroup");
        var label = widget.querySelector(".widget-label");
        if (label) {
          label.id = label.id || box.dataset.group + "-label";
          box.setAttribute("aria-labelledby", label.id);
        }
      }
      box.querySelectorAll('input[type="radio"]').forEach(function (radio) {
        if (radio.name !== box.dataset.group) radio.name = box.dataset.group;
      });
    });
  }

  new MutationObserver(function () { nameSliders(document); groupRadios(document); })
    .observe(document.documentElement, { childList: true, subtree: true });
})();
