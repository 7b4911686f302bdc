// Tell RequireJS where the book's own copy of the ipywidgets HTML manager lives, so the
// manager finds its icon fonts in _static/vendor/ (offline) and not beside the page.
(function () {
  var here = document.currentScript.src;
  var dist = here.slice(0, here.lastIndexOf("/") + 1) +
    "vendor/@jupyter-widgets/html-manager/dist";
  require.config({ paths: { "@jupyter-widgets/html-manager/dist": dist } });
})();
