// The picture of a live explorer, drawn on a canvas (helpers/widgets.py, FrameView).
//
// The kernel sends the current picture (the `value` trait: a PNG) with the readouts beside it and
// the controls' values it shows (`key`). While the learner reads, it also sends, as custom
// messages, the pictures of other positions of the controls ("ahead"), nearest first. When a
// control moves to one of them, this view paints it at once, from the browser, without waiting
// for the kernel; the kernel's own picture of that position, arriving later, is the same one and
// is not painted twice.

const KEPT = 320; // pictures kept, as PNG (some 25 KB each): the kernel remembers sending 250 (MAX_AHEAD)
const DECODED = 40; // of them, those nearest the controls decoded too (some 0.7 MB each), ready to paint

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
  let asked = 0; // each move or kernel picture gets the next number; an older one never covers a newer
  let painted = 0;
  let paints = 0;

  const paint = (number, key, bitmap, html, alt, source) => {
    if (number < painted || bitmap.width === 0) return; // older than what is shown, or let go meanwhile
    painted = number;
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

  // key -> {png, readouts, alt, bitmap: a promise while decoded}; a Map keeps arrival order
  const ahead = new Map();
  const decoded = []; // the DECODED entries decoded last
  let near = new Set(); // the keys nearest the controls now, as the kernel plans them
  const bitmapOf = (entry) => {
    if (!entry.bitmap) {
      entry.bitmap = decode(entry.png); // off the main thread
      decoded.push(entry);
      while (decoded.length > DECODED) {
        const old = decoded.shift();
        old.bitmap.then((b) => b.close());
        old.bitmap = null;
      }
    }
    return entry.bitmap;
  };

  const showCurrent = async () => {
    const key = keyOf(JSON.parse(model.get("key") || "[]"));
    if (key === shown) {
      readouts.innerHTML = model.get("readouts");
      return;
    }
    // the kernel answers a position the controls have left (a drag): its picture of where they are comes next
    if (controls.length && key !== here()) return;
    const number = ++asked;
    const found = ahead.get(key); // drawn ahead, perhaps still being decoded for the move that got here
    const entry = found ?? remember(key, model.get("value"), model.get("readouts"), model.get("alt"));
    paint(number, key, await bitmapOf(entry), entry.readouts, entry.alt, found ? "ahead" : "kernel");
  };

  // Kept as a picture ahead too: a move back to this position is painted at once.
  const remember = (key, png, html, alt) => {
    ahead.delete(key);
    const entry = { values: JSON.parse(key), png, readouts: html, alt, bitmap: null };
    ahead.set(key, entry);
    while (ahead.size > KEPT) ahead.delete(ahead.keys().next().value);
    return entry;
  };

  const keep = (msg, buffers) => {
    if (msg.type === "near") { // decode the positions nearest the controls now, ready to paint
      near = new Set(msg.keys.map(keyOf));
      near.forEach((key) => ahead.has(key) && bitmapOf(ahead.get(key)));
    } else if (msg.type === "ahead") {
      msg.keys.forEach((values, i) => {
        const key = keyOf(values);
        const entry = remember(key, buffers[i], msg.readouts[i], msg.alts[i]);
        if (near.has(key)) bitmapOf(entry);
      });
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
  // A control moved: decode the pictures along it, nearest first, those the way it moved before
  // those behind it (a drag goes on that way).
  let last = null;
  const along = (moving) => {
    const now = JSON.parse(here());
    const way = last && typeof now[moving] === "number" ? Math.sign(now[moving] - last[moving]) : 0;
    last = now;
    const distance = (entry) => {
      if (!entry.values.every((v, j) => j === moving || v === now[j])) return Infinity;
      const v = entry.values[moving];
      if (typeof v !== "number") return 1;
      return Math.abs(v - now[moving]) * (Math.sign(v - now[moving]) === -way ? 3 : 1);
    };
    [...ahead.values()].map((entry) => [distance(entry), entry]).filter(([d]) => d < Infinity)
      .sort((a, b) => a[0] - b[0]).slice(0, DECODED / 2).forEach(([, entry]) => bitmapOf(entry));
  };
  const moved = async (moving) => {
    const key = here();
    const found = ahead.get(key);
    if (found && key !== shown) {
      const number = ++asked;
      paint(number, key, await bitmapOf(found), found.readouts, found.alt, "ahead");
    }
    along(moving); // after this picture: its decoding goes first
  };
  const listeners = controls.map((control, i) => () => moved(i));
  controls.forEach((control, i) => control.on(`change:${traits[i]}`, listeners[i]));
  model.send({ type: "ready" });

  // What a test waits for: the kernel is still drawing pictures ahead ("1") or done ("0").
  const drawing = () => { canvas.dataset.drawingAhead = model.get("drawing_ahead") ? "1" : "0"; };
  model.on("change:drawing_ahead", drawing);
  drawing();

  return () => {
    controls.forEach((control, i) => control.off(`change:${traits[i]}`, listeners[i]));
    decoded.forEach((entry) => entry.bitmap?.then((b) => b.close()));
    ahead.clear();
  };
}

export default { render };
