/* Attention Lab: Predict, then see, on the site; and the learner's progress, in this browser only.
 *
 * Under every Predict, website/pages.py puts a form (.al-predict); the cells that answer it carry
 * the class tag_al-answer-N (from the notebooks' "answer" tags, the ones JupyterLab folds), and the
 * explanation after them sits in a div.al-explanation.al-answer-N. Their output and the explanation
 * stay hidden until the learner commits a guess or chooses to skip; then they show, with the guess
 * above the output. Guesses are kept in localStorage under one key; the contents page counts them
 * per notebook, and a button forgets them. Nothing is sent anywhere.
 *
 * Loaded in <head> without defer, so the "al-js" class hides the answers before the first paint;
 * without JavaScript the page shows every output, as the stored notebook does.
 */
(function () {
  "use strict";

  var STORE = "attention-lab-progress-v1";
  document.documentElement.classList.add("al-js");

  function load() {
    try {
      var data = JSON.parse(localStorage.getItem(STORE) || "{}");
      return data && typeof data === "object" && data.predicts ? data : { predicts: {} };
    } catch (e) {
      return { predicts: {} };
    }
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

  function setUpProgress(data) {
    document.querySelectorAll(".al-progress").forEach(function (box) {
      var template = box.getAttribute("data-of");
      box.querySelectorAll("li[data-page]").forEach(function (item) {
        var prefix = item.getAttribute("data-page") + "#";
        var done = Object.keys(data.predicts).filter(function (k) { return k.indexOf(prefix) === 0; }).length;
        var total = item.getAttribute("data-total");
        item.querySelector(".al-progress-count").textContent =
          template.replace("{done}", String(done)).replace("{total}", total);
        item.classList.toggle("al-done", done > 0 && String(done) === total);
      });
      var reset = box.querySelector(".al-reset");
      reset.addEventListener("click", function () {
        try { localStorage.removeItem(STORE); } catch (e) { /* nothing kept */ }
        setUpProgress.refresh();
      });
    });
  }
  setUpProgress.refresh = function () {
    document.querySelectorAll(".al-progress li[data-page]").forEach(function (item) {
      var box = item.closest(".al-progress");
      item.querySelector(".al-progress-count").textContent =
        box.getAttribute("data-of").replace("{done}", "0").replace("{total}", item.getAttribute("data-total"));
      item.classList.remove("al-done");
    });
  };

  document.addEventListener("DOMContentLoaded", function () {
    var data = load();
    setUpForms(data);
    setUpProgress(data);
  });
})();
