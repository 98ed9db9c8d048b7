/* Attention Lab: the notebooks' explorers, live without a kernel.
 *
 * Each .al-explorer holds the controls, the picture and the readouts at the starting position
 * (written by website/pages.py). Its manifest.json (website/frames.py) lists every position on
 * the site's grid, the picture and readouts drawn for it by the explorer's own code, and the
 * moves where changing one control also moves another (as the widgets do in JupyterLab).
 *
 * A control change swaps in a picture that is already decoded: the neighbours of the current
 * position (one or two slider steps, every option of a dropdown or toggle) are fetched and
 * decoded ahead, when the pointer or the keyboard reaches the explorer and after every change
 * (after a change to a picture not decoded ahead, once that picture is painted).
 * Each change's latency, from the input event to the first frame painted with the new picture,
 * is kept in window.alLatency (the browser test reads it), with whether that picture was decoded
 * ahead and how long the change waited for it.
 */
(function () {
  "use strict";

  var latency = (window.alLatency = window.alLatency || []);
  var CACHE_LIMIT = 240; // decoded pictures kept per explorer

  function afterPaint(callback) {
    requestAnimationFrame(function () {
      var channel = new MessageChannel();
      channel.port1.onmessage = callback;
      channel.port2.postMessage(null);
    });
  }

  function Explorer(root) {
    this.root = root;
    this.manifestUrl = new URL(root.getAttribute("data-manifest"), document.baseURI);
    this.picture = root.querySelector(".al-picture");
    this.readouts = root.querySelector(".al-readouts");
    var first = root.querySelector(".al-picture img");
    this.alt = first.getAttribute("data-alt") || first.getAttribute("alt"); // the picture's kind; describe() adds the readouts
    this.state = 0;
    this.cache = new Map();
    this.ready = null;
    this.shownUi = {};
    var self = this;
    root.querySelectorAll("[data-control]").forEach(function (el) { self.wire(el); });
    var warm = function () { self.load().then(function () { self.preload(); }); };
    root.addEventListener("pointerenter", warm);
    root.addEventListener("focusin", warm);
    if ("IntersectionObserver" in window) {
      var seen = new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) { seen.disconnect(); self.load(); }
      }, { rootMargin: "300px" });
      seen.observe(root);
    }
  }

  Explorer.prototype.load = function () {
    var self = this;
    if (!this.ready) {
      this.ready = fetch(this.manifestUrl).then(function (r) {
        if (!r.ok) throw new Error("manifest " + r.status);
        return r.json();
      }).then(function (m) {
        self.m = m;
        self.index = new Map(m.states.map(function (s, i) { return [s.join(","), i]; }));
        self.moves = new Map(m.moves.map(function (x) { return [x[0] + ":" + x[1] + ":" + x[2], x[3]]; }));
        self.root.classList.add("al-ready");
      });
    }
    return this.ready;
  };

  Explorer.prototype.ui = function (n, c) { return this.m.ui[this.m.state_ui[n][c]]; };

  /* The position reached from position n by setting control c to value v. */
  Explorer.prototype.target = function (n, c, v) {
    var moved = this.moves.get(n + ":" + c + ":" + v);
    if (moved !== undefined) return moved;
    var key = this.m.states[n].slice();
    key[c] = v;
    var found = this.index.get(key.join(","));
    return found === undefined ? n : found;
  };

  Explorer.prototype.image = function (n) {
    var url = new URL("frames/" + this.m.frames[n], this.manifestUrl).href;
    var entry = this.cache.get(url);
    if (entry) {
      this.cache.delete(url); // most recently used last
      this.cache.set(url, entry);
      return entry;
    }
    var img = new Image(this.m.size[0], this.m.size[1]);
    img.alt = this.alt;
    img.src = url;
    entry = { img: img, decoded: false };
    entry.promise = img.decode().then(function () { entry.decoded = true; }, function () { entry.failed = true; });
    this.cache.set(url, entry);
    while (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value);
    return entry;
  };

  /* Positions one step away: two slider steps each way, every option of the other controls. */
  Explorer.prototype.neighbours = function (n) {
    var out = new Set();
    var state = this.m.states[n];
    for (var c = 0; c < state.length; c++) {
      var ui = this.ui(n, c);
      var here = ui.findIndex(function (p) { return p[0] === state[c]; });
      var kind = this.m.controls[c].kind;
      for (var i = 0; i < ui.length; i++) {
        if (i === here || (kind === "slider" && Math.abs(i - here) > 2)) continue;
        out.add(this.target(n, c, ui[i][0]));
      }
    }
    out.delete(n);
    return out;
  };

  Explorer.prototype.preload = function () {
    var self = this;
    this.image(this.state);
    this.neighbours(this.state).forEach(function (t) { self.image(t); });
  };

  Explorer.prototype.wire = function (el) {
    var self = this;
    var c = Number(el.getAttribute("data-control"));
    if (el.tagName === "INPUT" && el.type === "range") {
      el.addEventListener("input", function (event) {
        var position = Number(el.value);
        self.change(c, function () { return self.ui(self.state, c)[position][0]; }, event.timeStamp);
      });
    } else if (el.tagName === "SELECT") {
      el.addEventListener("change", function (event) {
        var value = Number(el.value);
        self.change(c, function () { return value; }, event.timeStamp);
      });
    } else if (el.tagName === "INPUT" && el.type === "checkbox") {
      el.addEventListener("change", function (event) {
        var value = Number(el.checked ? el.getAttribute("data-on") : el.getAttribute("data-off"));
        self.change(c, function () { return value; }, event.timeStamp);
      });
    } else {
      el.addEventListener("click", function (event) {
        var button = event.target.closest("button[data-value]");
        if (!button) return;
        var value = Number(button.getAttribute("data-value"));
        self.change(c, function () { return value; }, event.timeStamp);
      });
    }
  };

  Explorer.prototype.change = function (c, valueOf, t0) {
    var self = this;
    if (this.m) {
      this.show(this.target(this.state, c, valueOf()), c, t0);
    } else {
      this.root.classList.add("al-loading");
      this.load().then(function () { self.show(self.target(self.state, c, valueOf()), c, t0); });
    }
  };

  Explorer.prototype.show = function (n, c, t0) {
    var self = this;
    this.state = n;
    var entry = this.image(n);
    var preloaded = entry.decoded;
    var swap = function () {
      if (self.state !== n) return; // a later change won
      var waited = performance.now() - t0; // the input event to the picture decoded (fetched first when not ahead)
      entry.img.alt = self.describe(n);
      self.picture.replaceChildren(entry.img);
      self.root.classList.remove("al-loading");
      self.readouts.innerHTML = self.readoutTable(n);
      self.sync(n);
      afterPaint(function () {
        latency.push({
          key: self.m.key, control: self.m.controls[c].name, preloaded: preloaded,
          ms: performance.now() - t0, decoded_ms: waited, frame: self.m.frames[n]
        });
        if (!preloaded) self.preload();
      });
    };
    if (preloaded) swap();
    else { // fetched and decoded alone: its neighbours wait until it is painted, not to slow it down
      this.root.classList.add("al-loading");
      entry.promise.then(swap);
    }
    this.sync(n); // the controls follow at once (a slider whose maximum moved, new options)
    if (preloaded) this.preload();
  };

  function escapeHtml(text) {
    return String(text).replace(/[&<>"]/g, function (ch) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[ch];
    });
  }

  /* The picture's alt text at position n: what it is, then the readouts drawn for that position. */
  Explorer.prototype.describe = function (n) {
    var names = this.m.readout_names;
    return this.alt + ": " + this.m.readouts[n].map(function (r) { return names[r[0]] + " " + r[1]; }).join("; ");
  };

  Explorer.prototype.readoutTable = function (n) {
    var names = this.m.readout_names;
    return "<table>" + this.m.readouts[n].map(function (r) {
      return "<tr><td>" + escapeHtml(names[r[0]]) + "</td><td>" + escapeHtml(r[1]) + "</td></tr>";
    }).join("") + "</table>";
  };

  /* Every control shows position n: its value, and its options or range there. */
  Explorer.prototype.sync = function (n) {
    var self = this;
    var state = this.m.states[n];
    this.root.querySelectorAll("[data-control]").forEach(function (el) {
      var c = Number(el.getAttribute("data-control"));
      var uiId = self.m.state_ui[n][c];
      var ui = self.m.ui[uiId];
      var v = state[c];
      var here = ui.findIndex(function (p) { return p[0] === v; });
      var changedUi = self.shownUi[c] !== undefined && self.shownUi[c] !== uiId;
      if (self.shownUi[c] === undefined) changedUi = true;
      self.shownUi[c] = uiId;
      if (el.tagName === "INPUT" && el.type === "range") {
        el.max = String(ui.length - 1);
        el.value = String(here);
        el.parentNode.querySelector("output").textContent = ui[here][1];
      } else if (el.tagName === "SELECT") {
        if (changedUi) {
          el.replaceChildren.apply(el, ui.map(function (p) {
            var o = document.createElement("option");
            o.value = String(p[0]);
            o.textContent = p[1];
            return o;
          }));
        }
        el.value = String(v);
      } else if (el.tagName === "INPUT" && el.type === "checkbox") {
        el.checked = String(v) === el.getAttribute("data-on");
      } else {
        if (changedUi) {
          el.replaceChildren.apply(el, ui.map(function (p) {
            var b = document.createElement("button");
            b.type = "button";
            b.setAttribute("data-value", String(p[0]));
            b.textContent = p[1];
            return b;
          }));
        }
        el.querySelectorAll("button[data-value]").forEach(function (b) {
          b.setAttribute("aria-pressed", String(Number(b.getAttribute("data-value")) === v));
        });
      }
    });
  };

  function start() {
    document.querySelectorAll(".al-explorer[data-manifest]").forEach(function (root) {
      root.alExplorer = new Explorer(root);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
