"use strict";
// Sorting and filtering of the page's tables. The tables are complete without this script (it
// only reorders and hides rows), so the page reads the same with scripts off and on paper.
(function () {
  function key(cell) {
    var s = cell.getAttribute("data-sort");
    return s === null ? cell.textContent.trim() : s;
  }
  function compare(a, b, numeric) {
    if (numeric) {
      var x = parseFloat(a), y = parseFloat(b);
      if (isNaN(x)) { x = -Infinity; }
      if (isNaN(y)) { y = -Infinity; }
      return x - y;
    }
    return a.localeCompare(b);
  }
  function sortBy(table, index, numeric, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    rows.forEach(function (r, i) { r.setAttribute("data-order", String(i)); });
    rows.sort(function (r1, r2) {
      var c = compare(key(r1.cells[index]), key(r2.cells[index]), numeric);
      return c !== 0 ? dir * c : parseInt(r1.getAttribute("data-order"), 10) - parseInt(r2.getAttribute("data-order"), 10);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function money(x) {
    var s = Math.abs(x).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return (x < 0 ? "-$" : "$") + s;
  }
  function refilter(table) {
    var id = table.id;
    var text = document.querySelector('[data-filter-text="' + id + '"]');
    var cat = document.querySelector('[data-filter-category="' + id + '"]');
    var marked = document.querySelector('[data-filter-marked="' + id + '"]');
    var words = text ? text.value.toLowerCase().split(/\s+/).filter(Boolean) : [];
    var category = cat ? cat.value : "";
    var shown = 0, total = 0, all = table.tBodies[0].rows.length;
    var totalIndex = -1;
    if (table.tFoot) {
      Array.prototype.forEach.call(table.tFoot.rows[0].cells, function (c, i) {
        if (c.classList.contains("total")) { totalIndex = i; }
      });
    }
    Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
      var hay = r.textContent.toLowerCase();
      var ok = words.every(function (w) { return hay.indexOf(w) >= 0; });
      if (category && r.getAttribute("data-category") !== category) { ok = false; }
      if (marked && marked.checked && !(r.classList.contains("estimate") || r.classList.contains("unpriced"))) { ok = false; }
      r.hidden = !ok;
      if (ok) {
        shown += 1;
        if (totalIndex >= 0) { total += parseFloat(key(r.cells[totalIndex])) || 0; }
      }
    });
    var count = document.querySelector('[data-filter-count="' + id + '"]');
    if (count) { count.textContent = shown === all ? all + " lines" : shown + " of " + all + " lines"; }
    if (totalIndex >= 0) {
      var cell = table.tFoot.rows[0].cells[totalIndex];
      if (!cell.hasAttribute("data-all")) { cell.setAttribute("data-all", cell.textContent); }
      cell.textContent = shown === all ? cell.getAttribute("data-all") : money(Math.round(total * 100) / 100);
    }
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = th.textContent;
      button.title = (th.title ? th.title + "; " : "") + "sort";
      th.textContent = "";
      th.appendChild(button);
      button.addEventListener("click", function () { sortBy(table, index, th.classList.contains("n"), th); });
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("[data-filter-text],[data-filter-category],[data-filter-marked]"),
    function (input) {
      var id = input.getAttribute("data-filter-text") || input.getAttribute("data-filter-category") ||
        input.getAttribute("data-filter-marked");
      var table = document.getElementById(id);
      if (!table) { return; }
      input.addEventListener("input", function () { refilter(table); });
      input.addEventListener("change", function () { refilter(table); });
    });
  Array.prototype.forEach.call(document.querySelectorAll(".controls"), function (c) { c.hidden = false; });
})();
