/* Attention Lab: Predict, then see, on the site; and the learner's progress, in this browser only.
 *
 * Under every Predict, website/pages.py puts a form (.al-predict); the cells that answer it carry
 * the class tag_al-answer-N (from the notebooks' "answer" tags, the ones JupyterLab folds), and the
 * explanation after them sits in a div.al-explanation.al-answer-N. Their output and the explanation
 * stay hidden until the learner commits a guess or chooses to skip; then they show, with the guess
 * above the output. Guesses are kept in localStorage under one key; the contents page counts them
 * per notebook, with the exercises checked right on the page (website/static/checks.js, which
 * writes them through window.AttentionLabProgress), and a button forgets both. Nothing is sent anywhere.
 *
 * Loaded in <head> without defer, so the "al-js" class hides the answers before the first paint;
 * without JavaScript the page shows every output, as the stored notebook does.
 */
(function () {
  "use strict";

  var STORE = "attention-lab-progress-v1";
  document.documentElement.classList.add("al-js");

  function load() {  // {predicts: {key: guess}, exercises: {key: when checked right}}
    var data;
    try {
      data = JSON.parse(localStorage.getItem(STORE) || "{}");
    } catch (e) {
      data = null;
    }
    if (!data || typeof data !== "object") data = {};
    if (!data.predicts || typeof data.predicts !== "object") data.predicts = {};
    if (!data.exercises || typeof data.exercises !== "object") data.exercises = {};
    return data;
  }

  function save(data) {
    try {
      localStorage.setItem(STORE, JSON.stringify(data));
    } catch (e) {
      /* storage off (private mode): the page still works, it only forgets */
    }
  }

  function answerCells(form) {  // its code cells, then the explanation after them (a div the page wraps it in)
    var n = form.getAttribute("data-number");
    return document.querySelectorAll(".tag_al-answer-" + n + ", .al-explanation.al-answer-" + n);
  }

  function reveal(form, entry) {
    var text = entry.skipped ? form.getAttribute("data-skipped") : form.getAttribute("data-yours") + " " + entry.guess;
    answerCells(form).forEach(function (cell, i) {
      cell.classList.add("al-revealed");
      var note = cell.querySelector(".al-your-guess");
      if (i === 0 && !note) {
        note = document.createElement("p");
        note.className = "al-your-guess";
        var output = cell.querySelector(".cell_output");
        cell.insertBefore(note, output);
      }
      if (note) note.textContent = text;
    });
    var box = form.querySelector("textarea");
    box.value = entry.guess;
    box.readOnly = true;
    form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    form.classList.add("al-committed");
    form.querySelector(".al-predict-status").textContent = text;
  }

  function commit(form, skipped) {
    var guess = form.querySelector("textarea").value.trim();
    if (!skipped && !guess) {
      form.querySelector(".al-predict-status").textContent = form.getAttribute("data-empty");
      form.querySelector("textarea").focus();
      return;
    }
    var data = load();
    var entry = { guess: skipped ? "" : guess, skipped: skipped, at: new Date().toISOString() };
    data.predicts[form.getAttribute("data-predict")] = entry;
    save(data);
    reveal(form, entry);
  }

  function setUpForms(data) {
    document.querySelectorAll("form.al-predict").forEach(function (form) {
      answerCells(form).forEach(function (cell) {
        if (cell.classList.contains("al-explanation")) return;  // hidden whole, no note needed
        var hidden = document.createElement("p");
        hidden.className = "al-hidden-note";
        hidden.textContent = form.getAttribute("data-hidden");
        cell.appendChild(hidden);
      });
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        commit(form, false);
      });
      form.querySelector(".al-skip").addEventListener("click", function () { commit(form, true); });
      var entry = data.predicts[form.getAttribute("data-predict")];
      if (entry) reveal(form, entry);
    });
  }

  function showProgress(box, data) {  // each chapter: Predicts committed, exercises checked right
    box.querySelectorAll("li[data-page]").forEach(function (item) {
      var prefix = item.getAttribute("data-page") + "#";
      var complete = true;
      [["predicts", ".al-progress-count", "data-of", "data-total"],
       ["exercises", ".al-progress-exercises", "data-exercises-of", "data-exercises"]].forEach(function (kind) {
        var count = item.querySelector(kind[1]);
        if (!count) return;
        var done = Object.keys(data[kind[0]]).filter(function (k) { return k.indexOf(prefix) === 0; }).length;
        var total = item.getAttribute(kind[3]);
        count.textContent = box.getAttribute(kind[2]).replace("{done}", String(done)).replace("{total}", total);
        complete = complete && String(done) === total;
      });
      item.classList.toggle("al-done", complete);
    });
  }

  function setUpProgress(data) {
    document.querySelectorAll(".al-progress").forEach(function (box) {
      showProgress(box, data);
      box.querySelector(".al-reset").addEventListener("click", function () {
        try { localStorage.removeItem(STORE); } catch (e) { /* nothing kept */ }
        showProgress(box, load());
      });
    });
  }

  // website/static/checks.js keeps the exercises checked right in the same place.
  window.AttentionLabProgress = { load: load, save: save };

  document.addEventListener("DOMContentLoaded", function () {
    var data = load();
    setUpForms(data);
    setUpProgress(data);
  });
})();
