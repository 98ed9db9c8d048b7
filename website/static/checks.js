/* Attention Lab: exercises whose answer is a value, checked on the page.
 *
 * Under each such exercise website/pages.py puts a form (form.al-check). Its data, made at build
 * time from the Python checkers by website/checks.py (see there), holds no answer: only salted
 * SHA-256 hashes of the answers the checker recognises, each with the checker's own reply (right,
 * or a hint), and the exercise's generic hints. The learner's answer is put in the same canonical
 * form, hashed and looked up; anything not found gets the generic hint, the closer one from the
 * second wrong answer on, as check() gives it in the notebook. An exercise checked right is kept in
 * the browser's progress (website/static/predict.js), and nothing leaves the browser.
 *
 * The checking itself (AttentionLabCheck.verdict) has no DOM: tests/test_site_checks.py runs it in
 * node against the same data, to prove that it agrees with the Python checker.
 */
(function (root) {
  "use strict";

  // --- SHA-256 of a string (UTF-8), as hex ------------------------------------------------
  var K = [];
  (function () {
    var n = 2, found = 0;
    function frac(x) { return ((x - Math.floor(x)) * 4294967296) >>> 0; }
    while (found < 64) {
      var prime = true;
      for (var d = 2; d * d <= n; d++) if (n % d === 0) { prime = false; break; }
      if (prime) K[found++] = frac(Math.pow(n, 1 / 3));
      n++;
    }
  })();

  function utf8(text) {
    var out = [];
    for (var i = 0; i < text.length; i++) {
      var c = text.codePointAt(i);
      if (c > 0xffff) i++;
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return out;
  }

  function sha256(text) {
    var bytes = utf8(text), length = bytes.length;
    bytes.push(0x80);
    while (bytes.length % 64 !== 56) bytes.push(0);
    var high = Math.floor(length / 0x20000000), low = (length * 8) >>> 0;
    bytes.push((high >>> 24) & 255, (high >>> 16) & 255, (high >>> 8) & 255, high & 255,
               (low >>> 24) & 255, (low >>> 16) & 255, (low >>> 8) & 255, low & 255);
    var h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    var w = new Array(64);
    function rot(x, n) { return (x >>> n) | (x << (32 - n)); }
    for (var block = 0; block < bytes.length; block += 64) {
      for (var t = 0; t < 16; t++) {
        var j = block + 4 * t;
        w[t] = ((bytes[j] << 24) | (bytes[j + 1] << 16) | (bytes[j + 2] << 8) | bytes[j + 3]) >>> 0;
      }
      for (t = 16; t < 64; t++) {
        var s0 = rot(w[t - 15], 7) ^ rot(w[t - 15], 18) ^ (w[t - 15] >>> 3);
        var s1 = rot(w[t - 2], 17) ^ rot(w[t - 2], 19) ^ (w[t - 2] >>> 10);
        w[t] = (w[t - 16] + s0 + w[t - 7] + s1) >>> 0;
      }
      var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
      for (t = 0; t < 64; t++) {
        var t1 = (k + (rot(e, 6) ^ rot(e, 11) ^ rot(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t]) >>> 0;
        var t2 = ((rot(a, 2) ^ rot(a, 13) ^ rot(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
        k = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
      }
      h = [h[0] + a, h[1] + b, h[2] + c, h[3] + d, h[4] + e, h[5] + f, h[6] + g, h[7] + k].map(function (x) { return x >>> 0; });
    }
    return h.map(function (x) { return ("00000000" + x.toString(16)).slice(-8); }).join("");
  }

  // --- the canonical form of a typed answer (website/checks.py: tokens, numbers_of, cell) ----
  var SEPARATORS = /[\s,;{}()\[\]"']+/;
  var NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
  var WHOLE = /^[+-]?\d+$/;

  function words(text) {
    return String(text).trim().split(SEPARATORS).filter(function (w) { return w.length > 0; });
  }

  function pythonRepr(x) {  // Python's repr of a float that is not a whole number below 1e21
    var parts = x.toExponential().split("e"), sign = x < 0 ? "-" : "";
    var digits = parts[0].replace("-", "").replace(".", ""), exp = parseInt(parts[1], 10);
    if (exp >= -4 && exp < 16) {
      if (exp < 0) return sign + "0." + "0".repeat(-exp - 1) + digits;
      var whole = digits.slice(0, exp + 1), rest = digits.slice(exp + 1);
      return sign + whole + "0".repeat(Math.max(0, exp + 1 - digits.length)) + "." + (rest || "0");
    }
    var mantissa = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    return sign + mantissa + "e" + (exp < 0 ? "-" : "+") + ("0" + Math.abs(exp)).slice(-Math.max(2, String(Math.abs(exp)).length));
  }

  function token(word) {
    if (WHOLE.test(word)) {
      var negative = word[0] === "-", digits = word.replace(/^[+-]/, "").replace(/^0+(?=\d)/, "");
      return (negative && digits !== "0" ? "-" : "") + digits;
    }
    if (NUMBER.test(word)) {
      var x = parseFloat(word);
      if (Number.isInteger(x) && Math.abs(x) < 1e21) return (x === 0 ? "0" : x.toFixed(0)) + ".0";
      return pythonRepr(x);
    }
    return word.toUpperCase();
  }

  function canonical(text, ordered) {
    var list = words(text).map(token);
    if (!ordered) list = Array.from(new Set(list)).sort(function (a, b) { return a < b ? -1 : a > b ? 1 : 0; });
    return list.join(",");
  }

  function numbersOf(text) {
    var list = words(text);
    if (!list.length || !list.every(function (w) { return NUMBER.test(w); })) return null;
    return list.map(parseFloat);
  }

  function cell(x, h) { return Math.floor(x / h + 0.5); }

  /* The page's reply to ``text`` for one exercise: {right, message} with the checker's words, or
   * {right: false, page: "empty" | "numbers"} when the page itself has to ask for an answer. */
  function verdict(data, text, attempt) {
    if (!String(text).trim()) return { right: false, page: "empty" };
    function find(preimage) {
      var index = data.cells[sha256(data.salt + "|" + preimage).slice(0, 12)];
      return index === undefined ? null : index;
    }
    if (data.kind === "pair") {  // numbers, then a letter: the numbers first, then, with them right, the letter
      var all = words(text), last = all[all.length - 1];
      if (all.length < 2 || NUMBER.test(last)) return { right: false, message: data.unpaired };
      var first = verdict(data.parts[0], all.slice(0, -1).join(", "), attempt);
      return first.page || !first.right ? first : verdict(data.parts[1], last, attempt);
    }
    var index = null;
    if (data.kind === "tokens") {
      index = find("t|" + canonical(text, data.ordered));
      var list = words(text);
      if (index === null && data.fraction !== null && list.length === 1 && NUMBER.test(list[0]) &&
          !Number.isInteger(parseFloat(list[0]))) index = data.fraction;
    } else {
      var values = numbersOf(text);
      if (values === null) return { right: false, page: "numbers" };
      var h = data.h;
      index = find("all|" + values.length + "|" + values.map(function (v) { return cell(v, h[0]); }).join(","));
      var size = data.shape.reduce(function (p, n) { return p * n; }, 1);
      if (index === null && values.length === size) {
        var each = values.map(function (v, i) {
          for (var level = 0; level < h.length; level++) {  // the finest grid that knows the value
            var found = find("e" + i + "|" + level + "|" + cell(v, h[level]));
            if (found !== null) return found;
          }
          return null;
        });
        var wrong = each.filter(function (x) { return x !== 0; });
        if (!wrong.length) index = 0;
        else if (wrong.indexOf(null) < 0 && wrong.indexOf(-1) < 0) index = wrong[0];
      }
    }
    if (index === null || index < 0) return { right: false, message: data.generic[attempt > 1 ? 1 : 0] };
    return { right: index === 0, message: data.replies[index] };
  }

  var api = { verdict: verdict, sha256: sha256, canonical: canonical, numbersOf: numbersOf, cell: cell };
  root.AttentionLabCheck = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  if (typeof document === "undefined") return;

  // --- the forms ------------------------------------------------------------------------------
  var loaded = {};
  function dataOf(url) {
    if (!loaded[url]) loaded[url] = fetch(url).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.json();
    });
    return loaded[url];
  }

  function setUp(form) {
    var id = form.getAttribute("data-exercise"), key = form.getAttribute("data-key");
    var input = form.querySelector("input"), reply = form.querySelector(".al-check-reply");
    var wrong = 0;
    var progress = root.AttentionLabProgress;
    if (progress && progress.load().exercises[key]) {
      form.classList.add("al-checked-right");
      reply.textContent = form.getAttribute("data-done");
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      dataOf(form.getAttribute("data-src")).then(function (all) {
        var result = verdict(all[id], input.value, wrong + 1);
        form.classList.remove("al-right", "al-wrong");
        if (result.page) {
          reply.textContent = form.getAttribute("data-" + result.page);
          input.focus();
          return;
        }
        wrong += result.right ? 0 : 1;
        form.classList.add(result.right ? "al-right" : "al-wrong");
        reply.textContent = (result.right ? "✅ " : "❌ ") + result.message;
        if (result.right && progress) {
          var data = progress.load();
          data.exercises[key] = { at: new Date().toISOString() };
          progress.save(data);
          form.classList.add("al-checked-right");
        }
      }).catch(function () {
        reply.textContent = form.getAttribute("data-unavailable");
      });
    });
  }

  function start() { document.querySelectorAll("form.al-check").forEach(setUp); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})(typeof window !== "undefined" ? window : globalThis);
