// The picture of a live explorer, drawn on a canvas (helpers/widgets.py, FrameView).
//
// The kernel sends the current picture (the `value` trait: a PNG) with the readouts beside it and
// the controls' values it shows (`key`). While the learner reads, it also sends, as custom
// messages, the pictures of other positions of the controls ("ahead"), nearest first. When a
// control moves to one of them, this view paints it at once, from the browser, without waiting
// for the kernel; the kernel's own picture of that position, arriving later, is the same one and
// is not painted twice.

const KEPT = 256; // pictures kept ahead, as PNG (some 25 KB each); helpers/widgets.py sends no more
const DECODED = 40; // of them, the latest kept decoded too (some 0.7 MB each), ready to paint

// The controls' values as one string; a number keeps 12 significant digits, so that a slider's
// value computed in the browser (0.1 + 0.2) and in the kernel (0.3) name the same position.
function keyOf(values) {
  return JSON.stringify(values.map((v) => (typeof v === "number" ? Number(v.toPrecision(12)) : v)));
}

function decode(bytes) {
  return createImageBitmap(new Blob([bytes], { type: "image/png" }));
}

async function render({ model, el }) {
  const canvas = document.createElement("canvas");
  canvas.className = "al-frame";
  canvas.setAttribute("role", "img");
  const readouts = document.createElement("div");
  readouts.className = "al-readouts";
  el.style.display = "flex";
  el.style.alignItems = "flex-start";
  el.append(canvas, readouts);
  const traits = model.get("control_traits");
  let controls = []; // the controls' own models, once the front end lends them (below)
  const here = () => keyOf(controls.map((control, i) => control.get(traits[i])));
  let shown = null;
  let pending = null; // the key of a picture kept ahead being decoded to be painted
  let paints = 0;
  let ticket = 0;

  const paint = (key, bitmap, html, alt, source) => {
    if (canvas.width !== bitmap.width || canvas.height !== bitmap.height) {
      canvas.width = bitmap.width;
      canvas.height = bitmap.height;
    }
    canvas.getContext("2d").drawImage(bitmap, 0, 0);
    canvas.setAttribute("aria-label", alt);
    readouts.innerHTML = html;
    shown = key;
    canvas.dataset.source = source; // "ahead": painted by the browser; "kernel": the kernel's message
    canvas.dataset.paint = String(++paints); // what a test waits for
  };

  const showCurrent = async () => {
    const key = keyOf(JSON.parse(model.get("key") || "[]"));
    if (key === shown || key === pending) {
      if (key === shown) readouts.innerHTML = model.get("readouts");
      return;
    }
    // the kernel answers a position the controls have left (a drag): its picture of where they are comes next
    if (controls.length && key !== here()) return;
    const mine = ++ticket;
    const bitmap = await decode(model.get("value"));
    if (mine === ticket) paint(key, bitmap, model.get("readouts"), model.get("alt"), "kernel");
  };

  // key -> {png, readouts, alt, bitmap (while among the DECODED latest)}; a Map keeps arrival order
  const ahead = new Map();
  const decoded = [];
  const keepDecoded = (entry) => {
    decoded.push(entry);
    while (decoded.length > DECODED) {
      const old = decoded.shift();
      old.bitmap?.close();
      old.bitmap = null;
    }
  };
  const keep = async (msg, buffers) => {
    if (msg.type === "near") { // the positions nearest the controls now: decode those kept as PNG
      for (const values of msg.keys) {
        const entry = ahead.get(keyOf(values));
        if (entry && !entry.bitmap) {
          entry.bitmap = await decode(entry.png);
          keepDecoded(entry);
        }
      }
      return;
    }
    if (msg.type !== "ahead") return;
    msg.keys.forEach((values, i) => {
      const key = keyOf(values);
      ahead.delete(key);
      ahead.set(key, { png: buffers[i], readouts: msg.readouts[i], alt: msg.alts[i], bitmap: null });
    });
    while (ahead.size > KEPT) ahead.delete(ahead.keys().next().value);
    for (const [i, values] of msg.keys.entries()) {
      const entry = ahead.get(keyOf(values));
      if (entry && !entry.bitmap) {
        entry.bitmap = await decode(buffers[i]);
        keepDecoded(entry);
      }
    }
  };

  model.on("change:key", showCurrent); // sent with its picture: one position, one picture
  model.on("msg:custom", keep);
  await showCurrent();

  // The controls' own models, where the front end lends them (JupyterLab, Notebook 7, VS Code,
  // Colab all do): a move paints a picture kept ahead before its message reaches the kernel.
  try {
    controls = await Promise.all(model.get("control_ids").map((id) => model.widget_manager.get_model(id)));
  } catch {
    controls = []; // no lookup: every picture comes from the kernel
  }
  const moved = async () => {
    const key = here();
    const found = ahead.get(key);
    if (!found || key === shown) return;
    const mine = ++ticket; // a kernel picture still being decoded is older than this one
    if (!found.bitmap) {
      pending = key;
      found.bitmap = await decode(found.png); // off the main thread, without a round trip
      keepDecoded(found);
      if (pending === key) pending = null;
      if (mine !== ticket) return;
    }
    paint(key, found.bitmap, found.readouts, found.alt, "ahead");
  };
  controls.forEach((control, i) => control.on(`change:${traits[i]}`, moved));
  model.send({ type: "ready" });

  // What a test waits for: the kernel is still drawing pictures ahead ("1") or done ("0").
  const drawing = () => { canvas.dataset.drawingAhead = model.get("drawing_ahead") ? "1" : "0"; };
  model.on("change:drawing_ahead", drawing);
  drawing();

  return () => {
    controls.forEach((control, i) => control.off(`change:${traits[i]}`, moved));
    decoded.forEach((entry) => entry.bitmap?.close());
    ahead.clear();
  };
}

export default { render };
