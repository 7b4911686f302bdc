// The book's own script, on every page (_config.yml: html_js_files); its CSS is book.css.
// Once MathJax has typeset the page, find the formulas wider than the column. Inline ones
// are made to scroll on their own (.wide-inline-math) instead of being cut off by their box;
// every formula that scrolls (display or inline) gets a visible cue (.math-scrolls: a shadow
// on the side where more is hidden, .math-scrolled-end once scrolled to the right end).
// Code blocks (code cells, their output): each line becomes a .code-line block with a
// hanging indent, so that a line too long for the column wraps (book.css) and its
// continuation is indented past the line's own indentation. The text is unchanged (each
// line keeps its newline), so copying a cell copies the same code. Tables: see tidyTable,
// scrollBox and scopeHeaders. The language switch: see wireLanguageSwitch.
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

  // A box that scrolls, and by more than a glyph's overhang (a few pixels) for a formula;
  // a table's box by more than a pixel (its last column's text would be cut).
  function markScrolling(box) {
    var overflow = getComputedStyle(box).overflowX;
    var slack = box.classList.contains("table-scroll") ? 1 : 4;
    var scrolls = (overflow === "auto" || overflow === "scroll") &&
      box.scrollWidth > box.clientWidth + slack;
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

  function blank(cell) { return !cell.textContent.trim(); }
  function cells(row) { return Array.prototype.slice.call(row.cells); }

  // A pandas table (table.dataframe) made readable and its headers meaningful: a default
  // index (rows 0, 1, 2, ... under an empty corner) is dropped; the index's name, which
  // pandas writes in a second header row of otherwise empty cells, moves into the empty
  // corner above it; then scopeHeaders. book.css aligns the numbers and spaces the columns.
  function tidyTable(table) {
    var head = table.tHead;
    var body = table.tBodies[0];
    if (!head || !body || table.dataset.tidy) return;
    table.dataset.tidy = "1";
    var rows = head.rows;
    if (rows.length === 2) {
      var names = cells(rows[1]);
      var k = 0;
      while (k < names.length && !blank(names[k])) k++;
      var corner = cells(rows[0]).slice(0, k);
      if (k > 0 && names.slice(k).every(blank) &&
          corner.every(function (c) { return blank(c) && c.colSpan === 1; })) {
        corner.forEach(function (c, i) { c.textContent = names[i].textContent; });
        head.removeChild(rows[1]);
      }
    } else if (rows.length === 1 && rows[0].cells.length && blank(rows[0].cells[0])) {
      var defaultIndex = Array.prototype.every.call(body.rows, function (row, i) {
        var first = row.cells[0];
        return first && first.tagName === "TH" && first.textContent.trim() === String(i) &&
          row.querySelectorAll("th").length === 1;
      });
      if (defaultIndex) {
        rows[0].deleteCell(0);
        Array.prototype.forEach.call(body.rows, function (row) { row.deleteCell(0); });
      }
    }
    scopeHeaders(table);
  }

  // Any table (pandas', a styled one, or one written in a chapter) scrolls in its own box,
  // .table-scroll (the theme's scrolling container when it has one), which shows the same
  // cue as a formula that scrolls once it is wider than the column.
  function scrollBox(table) {
    var parent = table.parentElement;
    if (parent.classList.contains("pst-scrollable-table-container") ||
        parent.classList.contains("table-scroll")) {
      parent.classList.add("table-scroll");
      return;
    }
    var box = document.createElement("div");
    box.className = "table-scroll";
    parent.insertBefore(box, table);
    box.appendChild(table);
  }

  // In any table: a header cell without text becomes a plain cell (an empty header names
  // nothing), and every other one says whether it heads a column or a row.
  function scopeHeaders(table) {
    table.querySelectorAll("th").forEach(function (th) {
      if (blank(th)) {
        var td = document.createElement("td");
        Array.prototype.forEach.call(th.attributes, function (a) {
          td.setAttribute(a.name, a.value);
        });
        while (th.firstChild) td.appendChild(th.firstChild);
        th.parentNode.replaceChild(td, th);
      } else if (!th.hasAttribute("scope")) {
        th.setAttribute("scope", th.closest("thead") ? "col" : "row");
      }
    });
  }

  // The language switch (_templates/language-switch.html) leads to the same page in the other
  // edition; both have the same headings in the same order (tests/test_zh_parity.py), but
  // their anchors differ (Sphinx slugs each edition's own heading text), so sections are
  // matched by position: the link carries #dpkit-section-<n>, the n-th section of the page
  // (0 = its title), and the page it opens scrolls to its own n-th section.
  var SECTION_HASH = /^#dpkit-section-(\d+)$/;

  function pageSections() {
    return Array.prototype.filter.call(
      document.querySelectorAll(".bd-article section[id]"),
      function (section) {
        var first = section.firstElementChild;
        return first && /^H[1-6]$/.test(first.tagName);
      });
  }

  // The section the reader is in: the last one whose heading is above the upper third of
  // the window (0, the page's title, at the top of the page).
  function currentSection(sections) {
    var line = window.innerHeight / 3;
    var index = 0;
    sections.forEach(function (section, i) {
      if (section.firstElementChild.getBoundingClientRect().top <= line) index = i;
    });
    return index;
  }

  function onSwitch() {
    var active = document.activeElement;
    return Boolean(active && active.classList && active.classList.contains("language-switch"));
  }

  function wireLanguageSwitch() {
    var sections = pageSections();
    var match = SECTION_HASH.exec(window.location.hash);
    var target = match && sections[Number(match[1])];
    if (target) {
      history.replaceState(null, "", "#" + target.id);
      target.scrollIntoView();
    }
    // Where the reader is, followed as the page scrolls; not while the switch has the focus:
    // reaching it with Tab scrolls the page up to the header, away from the section.
    var current = currentSection(sections);
    var pending = false;
    window.addEventListener("scroll", function () {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(function () {
        pending = false;
        if (!onSwitch()) current = currentSection(sections);
      });
    }, {passive: true});
    document.querySelectorAll("a.language-switch").forEach(function (link) {
      var base = link.getAttribute("href").split("#")[0];
      // Before the browser follows the link: a click, Enter, a middle click or a touch.
      ["mousedown", "touchstart", "keydown", "click"].forEach(function (event) {
        link.addEventListener(event, function () {
          link.setAttribute("href", current ? base + "#dpkit-section-" + current : base);
        });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    wireLanguageSwitch();
    document.querySelectorAll(".bd-article div.highlight > pre").forEach(splitLines);
    document.querySelectorAll(".bd-article table.dataframe").forEach(tidyTable);
    document.querySelectorAll(".bd-article table:not(.dataframe)").forEach(scopeHeaders);
    document.querySelectorAll(".bd-article table").forEach(scrollBox);
    // A table that scrolls can be scrolled with the keyboard too: it takes the focus.
    var markTables = function () {
      document.querySelectorAll(".bd-article .table-scroll").forEach(function (box) {
        markScrolling(box);
        if (box.classList.contains("math-scrolls")) box.setAttribute("tabindex", "0");
        else box.removeAttribute("tabindex");
      });
    };
    markTables();
    window.addEventListener("resize", markTables);
    // Fonts loaded after this point (the CJK ones among them) can widen a table.
    window.addEventListener("load", markTables);
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(markTables);
    var mj = window.MathJax;
    if (!mj || !mj.startup || !mj.startup.promise) return;
    mj.startup.promise.then(function () { markAll(); markTables(); });
    var pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(markAll, 150);
    });
  });
})();
