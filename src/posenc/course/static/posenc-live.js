/*
 * posenc-live.js -- the course's card figures, computed and drawn in the reader's browser.
 *
 * One ES module serves both places a figure is shown:
 *   - Jupyter: it is the `_esm` of posenc.course.figures.live.LiveFigure (an anywidget), so
 *     `render({model, el})` follows anywidget's contract;
 *   - the static site: the build copies this file into `_static/`, and posenc-widgets.js
 *     imports it and calls the same `render` with a small model over the page's embedded
 *     widget state. Nothing is requested from another origin, and nothing at all while a
 *     slider moves.
 *
 * The formulas are exported (arrays in, arrays out) and are checked against posenc's numpy
 * definitions on random parameters (tests/test_live_figures.py). Words come from the model
 * (`text`: the figure's strings in each language, made by Python from posenc.course.i18n),
 * so a figure reads the same in a notebook and on the page of either edition.
 */

/* ---------------------------------------------------------------- formulas ------------ */

/** w_i = base^(-2i/d), i = 0 .. ceil(d/2)-1 (posenc.sinusoidal.sinusoidal_frequencies). */
export function sinusoidalFrequencies(dModel, base) {
  const n = Math.ceil(dModel / 2);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.pow(base, -(2 * i) / dModel);
  return out;
}

/** 2 pi / w_i (posenc.sinusoidal.sinusoidal_wavelengths). */
export function sinusoidalWavelengths(dModel, base) {
  return sinusoidalFrequencies(dModel, base).map((w) => (2 * Math.PI) / w);
}

/** The PE table, row-major [positions, d_model]: column 2i sin(p w_i), 2i+1 cos(p w_i)
 * (posenc.sinusoidal.sinusoidal_encoding). */
export function sinusoidalEncoding(numPositions, dModel, base) {
  const freqs = sinusoidalFrequencies(dModel, base);
  const out = new Float64Array(numPositions * dModel);
  for (let p = 0; p < numPositions; p++) {
    const row = p * dModel;
    for (let i = 0; i < freqs.length; i++) {
      const a = p * freqs[i];
      out[row + 2 * i] = Math.sin(a);
      if (2 * i + 1 < dModel) out[row + 2 * i + 1] = Math.cos(a);
    }
  }
  return out;
}

/** PE[p].PE[p+k] = sum_i cos(k w_i), for each distance k (posenc.sinusoidal.sinusoidal_dot_product). */
export function sinusoidalDotProduct(distances, dModel, base) {
  const freqs = sinusoidalFrequencies(dModel, base);
  const out = new Float64Array(distances.length);
  for (let j = 0; j < distances.length; j++) {
    let s = 0;
    for (let i = 0; i < freqs.length; i++) s += Math.cos(distances[j] * freqs[i]);
    out[j] = s;
  }
  return out;
}

/** Centred moving average over an odd window: entry j averages values[j .. j+window-1]
 * (posenc.course.figures.absolute.running_mean). */
export function runningMean(values, window) {
  const out = new Float64Array(values.length - window + 1);
  const cum = new Float64Array(values.length + 1);
  for (let i = 0; i < values.length; i++) cum[i + 1] = cum[i] + values[i];
  for (let j = 0; j < out.length; j++) out[j] = (cum[j + window] - cum[j]) / window;
  return out;
}

function powerOfTwoSlopes(n) {
  const start = Math.pow(2, -8 / n);
  const out = [];
  for (let h = 0; h < n; h++) out.push(Math.pow(start, h + 1));
  return out;
}

/** ALiBi's slopes in the official order, interleaved for a head count that is not a power
 * of two (posenc.alibi.alibi_slopes). */
export function alibiSlopes(numHeads) {
  const c = Math.pow(2, Math.floor(Math.log2(numHeads)));
  let slopes = powerOfTwoSlopes(c);
  if (c < numHeads) {
    const extra = powerOfTwoSlopes(2 * c).filter((_, i) => i % 2 === 0).slice(0, numHeads - c);
    slopes = slopes.concat(extra);
  }
  return Float64Array.from(slopes);
}

/** The causal bias, row-major [heads, length, length]: -m (i - j) for j <= i, -Infinity above
 * the diagonal (posenc.alibi.alibi_bias(num_heads, length)). */
export function alibiBias(numHeads, length) {
  const slopes = alibiSlopes(numHeads);
  const out = new Float64Array(numHeads * length * length);
  for (let h = 0; h < numHeads; h++) {
    for (let i = 0; i < length; i++) {
      for (let j = 0; j < length; j++) {
        const d = i - j;
        out[(h * length + i) * length + j] = d >= 0 ? -slopes[h] * d + 0 : -Infinity;
      }
    }
  }
  return out;
}

/** theta_i = base^(-2i/head_dim), i < head_dim/2 (posenc.rope.rope_frequencies). */
export function ropeFrequencies(headDim, base) {
  const out = new Float64Array(headDim / 2);
  for (let i = 0; i < out.length; i++) out[i] = Math.pow(base, -(2 * i) / headDim);
  return out;
}

/** m theta_i for one position m (posenc.rope.rope_angles). */
export function ropeAngles(position, headDim, base) {
  return ropeFrequencies(headDim, base).map((t) => position * t);
}

/** Position interpolation: theta_i / s (posenc.scaling "linear"). */
export function piFrequencies(headDim, base, factor) {
  return ropeFrequencies(headDim, base).map((t) => t / factor);
}

/** NTK-aware: the default ladder with base s^(d/(d-2)) times larger (posenc.scaling "ntk"). */
export function ntkFrequencies(headDim, base, factor) {
  return ropeFrequencies(headDim, base * Math.pow(factor, headDim / (headDim - 2)));
}

function correctionDim(rotations, headDim, base, length0) {
  return (headDim * Math.log(length0 / (rotations * 2 * Math.PI))) / (2 * Math.log(base));
}

/** YaRN's ramp bounds (low, high) in pair indices, truncated and clamped as Hugging Face
 * does (posenc.scaling.yarn_correction_range). */
export function yarnCorrectionRange(headDim, base, length0, betaFast = 32, betaSlow = 1) {
  const low = Math.floor(correctionDim(betaFast, headDim, base, length0));
  const high = Math.ceil(correctionDim(betaSlow, headDim, base, length0));
  return [Math.max(low, 0), Math.min(high, headDim - 1)];
}

/** YaRN ("NTK-by-parts"): theta_i below the ramp, theta_i / s above it, linear in between
 * (posenc.scaling "yarn"). */
export function yarnFrequencies(headDim, base, factor, length0, betaFast = 32, betaSlow = 1) {
  let [low, high] = yarnCorrectionRange(headDim, base, length0, betaFast, betaSlow);
  if (low === high) high += 0.001;
  return ropeFrequencies(headDim, base).map((t, i) => {
    const ramp = Math.min(Math.max((i - low) / (high - low), 0), 1);
    return t * (1 - ramp) + (t / factor) * ramp;
  });
}

/** Dynamic NTK at length seqLen: the NTK ladder with the effective factor
 * s L / L0 - (s - 1), L = max(seqLen, L0) (posenc.scaling "dynamic"). */
export function dynamicFrequencies(headDim, base, factor, length0, seqLen) {
  const length = Math.max(seqLen, length0);
  return ntkFrequencies(headDim, base, (factor * length) / length0 - (factor - 1));
}

/** Llama 3.1: unchanged below wavelength L0/high, divided by s above L0/low, blended in
 * between (posenc.scaling "llama3"). */
export function llama3Frequencies(headDim, base, factor, length0, low = 1, high = 4) {
  return ropeFrequencies(headDim, base).map((t) => {
    const wavelength = (2 * Math.PI) / t;
    if (wavelength < length0 / high) return t;
    if (wavelength > length0 / low) return t / factor;
    const smooth = (length0 / wavelength - low) / (high - low);
    return (1 - smooth) * (t / factor) + smooth * t;
  });
}

/* ---------------------------------------------------------------- colours ------------- */

function labToSrgb(L, a, b) {
  const fy = (L + 16) / 116;
  const f = [fy + a / 500, fy, fy - b / 200];
  const white = [0.95047, 1.0, 1.08883];
  const xyz = f.map((v, i) => (v > 6 / 29 ? v ** 3 : 3 * (6 / 29) ** 2 * (v - 4 / 29)) * white[i]);
  const m = [[3.2404542, -1.5371385, -0.4985314], [-0.969266, 1.8760108, 0.041556],
    [0.0556434, -0.2040259, 1.0572252]];
  return m.map((row) => {
    const c = row[0] * xyz[0] + row[1] * xyz[1] + row[2] * xyz[2];
    const s = c <= 0.0031308 ? 12.92 * c : 1.055 * Math.abs(c) ** (1 / 2.4) - 0.055;
    return Math.round(255 * Math.min(Math.max(s, 0), 1));
  });
}

/* The course's diverging map (posenc.course.figures.style.DIVERGING) in 16 levels, as the
 * frames drew it: straight lines in CIELAB, dark blue - near white - dark orange. */
const DIVERGING = (() => {
  const low = [32, 8, -45], mid = [97, 0, 0], high = [32, 30, 40];
  const out = [];
  for (let k = 0; k < 16; k++) {
    const x = k / 15;
    const [p, q, t] = x < 0.5 ? [low, mid, x * 2] : [mid, high, x * 2 - 1];
    out.push(labToSrgb(...p.map((v, i) => v + t * (q[i] - v))));
  }
  return out;
})();

/* matplotlib's viridis at 9 stops, interpolated: the ALiBi bias matrices. */
const VIRIDIS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37]];
function viridis(x) {
  const t = Math.min(Math.max(x, 0), 1) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(t), VIRIDIS.length - 2), f = t - i;
  return VIRIDIS[i].map((v, c) => Math.round(v + f * (VIRIDIS[i + 1][c] - v)));
}
function diverging(v) {
  return DIVERGING[Math.min(15, Math.max(0, Math.floor(((v + 1) / 2) * 16)))];
}
/** [r, g, b] as one opaque pixel of a Uint32Array over ImageData (little-endian RGBA). */
function pack([r, g, b]) { return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0; }
const DIVERGING_PACKED = DIVERGING.map(pack);
function divergingPacked(v) {
  return DIVERGING_PACKED[Math.min(15, Math.max(0, Math.floor(((v + 1) / 2) * 16)))];
}

/* Method colours (posenc.catalogue), and a lighter twin of each for the dark theme. */
const PALETTE = {
  light: { sin: "#0072B2", alibi: "#009E73", rope: "#D55E00", accent: "#E69F00",
    grey: "#767676", masked: "#d9d9d9", unturned: "#0072B2",
    // the scaling methods (posenc.course.figures.scaling.SCALING_COLORS)
    linear: "#0072B2", ntk: "#E69F00", dynamic: "#56B4E9", yarn: "#009E73", llama3: "#D55E00" },
  dark: { sin: "#56B4E9", alibi: "#3fd0a4", rope: "#ff8c42", accent: "#F0C24B",
    grey: "#a0a0a0", masked: "#4a4a4a", unturned: "#56B4E9",
    linear: "#6cb8f0", ntk: "#F0C24B", dynamic: "#9fd8f5", yarn: "#3fd0a4", llama3: "#ff8c42" },
};

function theme(el) {
  const style = getComputedStyle(el);
  const ink = style.color || "rgb(0, 0, 0)";
  const [r, g, b] = (ink.match(/\d+(\.\d+)?/g) || [0, 0, 0]).map(Number);
  const dark = 0.2126 * r + 0.7152 * g + 0.0722 * b > 128;  // light text: a dark page
  return { ink, dark, colors: dark ? PALETTE.dark : PALETTE.light,
    font: style.fontFamily || "sans-serif" };
}

/* ---------------------------------------------------------------- numbers ------------- */

/** A value as the controls show it: 10000 -> "10000", 31622.8 -> "31623", 0.5 -> "0.5". */
export function formatValue(v) {
  if (Number.isInteger(v)) return String(v);
  return String(Number(v.toPrecision(4)));
}

function fixed(v, digits) {
  const s = v.toFixed(digits);
  return s === "-" + (0).toFixed(digits) ? (0).toFixed(digits) : s;
}

function slopeLabel(m) {
  const e = Math.log2(m);
  if (Math.abs(e - Math.round(e)) < 1e-9) return Math.round(e) === 0 ? "1" : "1/" + 2 ** -Math.round(e);
  return "2^" + String(Number(e.toPrecision(6)));
}

/** The control's value snapped to what the figure accepts: an integer, an even integer or
 * three significant digits (a base of 31622.78 is drawn and shown as 31600). */
export function snap(value, kind) {
  if (kind === "int") return Math.round(value);
  if (kind === "even") return 2 * Math.round(value / 2);
  if (kind === "sig3") return Number(value.toPrecision(3));
  return value;
}

/** The next value after x (dir +1) or before it (-1) that a control snapped to `kind` takes:
 * x +- 1, x +- 2, or the next three-digit number (10000 -> 10100 up, 9990 down). */
export function neighbour(x, dir, kind) {
  if (kind === "int") return x + dir;
  if (kind === "even") return x + 2 * dir;
  if (kind === "sig3") {
    const e = Math.floor(Math.log10(x) + 1e-12);
    const unit = Math.pow(10, e - 2);
    const step = dir < 0 && Math.abs(x - Math.pow(10, e)) < unit / 1e6 ? unit / 10 : unit;
    return snap(x + dir * step, "sig3");
  }
  return x * Math.pow(1.001, dir);
}

/* ---------------------------------------------------------------- axes ---------------- */

function niceTicks(lo, hi, count) {
  const span = hi - lo, raw = span / Math.max(count, 1);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => span / s <= count) || 10 * mag;
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}

/** A plotting area on a canvas: data (x, y) to CSS px and back, and its axes drawn. */
class Axes {
  constructor(ctx, box, x, y, th) {
    Object.assign(this, { ctx, box, x, y, th });
  }
  px(v) { return this.box.left + ((this.x.map(v) - this.x.map(this.x.lo)) / (this.x.map(this.x.hi) - this.x.map(this.x.lo))) * this.box.width; }
  py(v) { return this.box.top + this.box.height - ((this.y.map(v) - this.y.map(this.y.lo)) / (this.y.map(this.y.hi) - this.y.map(this.y.lo))) * this.box.height; }
  dataX(px) {
    const f = (px - this.box.left) / this.box.width;
    return this.x.unmap(this.x.map(this.x.lo) + f * (this.x.map(this.x.hi) - this.x.map(this.x.lo)));
  }
  dataY(py) {
    const f = (this.box.top + this.box.height - py) / this.box.height;
    return this.y.unmap(this.y.map(this.y.lo) + f * (this.y.map(this.y.hi) - this.y.map(this.y.lo)));
  }
  inside(px, py) {
    const b = this.box;
    return px >= b.left && px <= b.left + b.width && py >= b.top && py <= b.top + b.height;
  }
  frame({ xticks, yticks, xlabel, ylabel, grid = true }) {
    const { ctx, box, th } = this;
    ctx.save();
    ctx.strokeStyle = th.ink;
    ctx.fillStyle = th.ink;
    ctx.lineWidth = 1;
    ctx.font = `${th.tick}px ${th.font}`;
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (const [v, label] of xticks) {
      const x = Math.round(this.px(v)) + 0.5;
      if (grid) { ctx.globalAlpha = 0.12; ctx.beginPath(); ctx.moveTo(x, box.top); ctx.lineTo(x, box.top + box.height); ctx.stroke(); }
      ctx.globalAlpha = 1;
      ctx.beginPath(); ctx.moveTo(x, box.top + box.height); ctx.lineTo(x, box.top + box.height + 4); ctx.stroke();
      ctx.fillText(label, x, box.top + box.height + 6);
    }
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (const [v, label] of yticks) {
      const y = Math.round(this.py(v)) + 0.5;
      if (grid) { ctx.globalAlpha = 0.12; ctx.beginPath(); ctx.moveTo(box.left, y); ctx.lineTo(box.left + box.width, y); ctx.stroke(); }
      ctx.globalAlpha = 1;
      ctx.beginPath(); ctx.moveTo(box.left - 4, y); ctx.lineTo(box.left, y); ctx.stroke();
      ctx.fillText(label, box.left - 6, y);
    }
    ctx.globalAlpha = 0.6;
    ctx.strokeRect(box.left + 0.5, box.top + 0.5, box.width, box.height);
    ctx.globalAlpha = 1;
    ctx.font = `${th.label}px ${th.font}`;
    ctx.textAlign = "center";
    ctx.textBaseline = "bottom";
    ctx.fillText(xlabel, box.left + box.width / 2, box.top + box.height + 8 + th.tick + th.label + 2, box.width);
    ctx.save();
    ctx.translate(th.label + 2, box.top + box.height / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "middle";
    ctx.fillText(ylabel, 0, -th.label / 2 + 2, box.height);
    ctx.restore();
    ctx.restore();
  }
  line(xs, ys, { color, width = 1.5, dash = [] }) {
    const { ctx } = this;
    ctx.save();
    ctx.strokeStyle = color; ctx.lineWidth = width; ctx.setLineDash(dash);
    ctx.beginPath();
    let pen = false;
    for (let i = 0; i < xs.length; i++) {
      if (!Number.isFinite(ys[i])) { pen = false; continue; }
      const x = this.px(xs[i]), y = this.py(ys[i]);
      if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y);
      pen = true;
    }
    ctx.stroke();
    ctx.restore();
  }
  dots(xs, ys, { color, r = 3, square = false }) {
    const { ctx } = this;
    ctx.save();
    ctx.fillStyle = color;
    for (let i = 0; i < xs.length; i++) {
      const x = this.px(xs[i]), y = this.py(ys[i]);
      ctx.beginPath();
      if (square) ctx.rect(x - r, y - r, 2 * r, 2 * r); else ctx.arc(x, y, r, 0, 2 * Math.PI);
      ctx.fill();
    }
    ctx.restore();
  }
  hline(v, opts) { this.line([this.x.lo, this.x.hi], [v, v], opts); }
  vline(v, { color, width = 1, dash = [] }) {
    const { ctx, box } = this;
    ctx.save(); ctx.strokeStyle = color; ctx.lineWidth = width; ctx.setLineDash(dash);
    ctx.beginPath(); ctx.moveTo(this.px(v), box.top); ctx.lineTo(this.px(v), box.top + box.height); ctx.stroke();
    ctx.restore();
  }
  /* A [rows, cols] grid of colours (colorOf: one packed RGBA per cell, see pack()), drawn
   * crisp where a cell is at least 3 px wide, else smoothed (never subsampled: that would
   * draw stripes not in the data). */
  image(rows, cols, colorOf) {
    // one scratch canvas and pixel buffer for every figure: a redraw allocates neither
    if (!scratch) scratch = { canvas: document.createElement("canvas"), img: null };
    const src = scratch.canvas;
    if (src.width !== cols || src.height !== rows) { src.width = cols; src.height = rows; scratch.img = null; }
    const c = src.getContext("2d");
    if (!scratch.img) scratch.img = c.createImageData(cols, rows);
    const px = new Uint32Array(scratch.img.data.buffer);
    for (let r = 0, o = 0; r < rows; r++) {
      for (let k = 0; k < cols; k++, o++) px[o] = colorOf(r, k);
    }
    c.putImageData(scratch.img, 0, 0);
    const { ctx, box } = this;
    ctx.save();
    ctx.imageSmoothingEnabled = box.width / cols < 3;
    ctx.drawImage(src, box.left, box.top, box.width, box.height);
    ctx.restore();
  }
}

let scratch = null;
const linear = (lo, hi) => ({ lo, hi, map: (v) => v, unmap: (v) => v });
const log10 = (lo, hi) => ({ lo, hi, map: Math.log10, unmap: (v) => Math.pow(10, v) });

function colorbar(ctx, th, box, stops, ticks, label) {
  const bar = { left: box.left + box.width + 12, top: box.top, width: 12, height: box.height };
  for (let k = 0; k < bar.height; k++) {
    const [r, g, b] = stops(1 - k / (bar.height - 1));
    ctx.fillStyle = `rgb(${r},${g},${b})`;
    ctx.fillRect(bar.left, bar.top + k, bar.width, 1.5);
  }
  ctx.save();
  ctx.strokeStyle = th.ink; ctx.fillStyle = th.ink; ctx.globalAlpha = 0.8;
  ctx.strokeRect(bar.left + 0.5, bar.top + 0.5, bar.width, bar.height);
  ctx.globalAlpha = 1;
  ctx.font = `${th.tick}px ${th.font}`; ctx.textAlign = "left"; ctx.textBaseline = "middle";
  for (const [f, text] of ticks) ctx.fillText(text, bar.left + bar.width + 4, bar.top + (1 - f) * bar.height);
  if (label) {
    ctx.save(); ctx.translate(bar.left + bar.width + 4 + th.tick * 2.6, bar.top + bar.height / 2);
    ctx.rotate(-Math.PI / 2); ctx.textAlign = "center"; ctx.font = `${th.label}px ${th.font}`;
    ctx.fillText(label, 0, 0); ctx.restore();
  }
  ctx.restore();
}

/* ---------------------------------------------------------------- figures ------------- */

/* Each figure: draw(ctx, size, values, words, th) -> { title, legend: [[color, dash,
 * text]], pick(px, py) -> readout text or null, mark(px, py) -> [x, y] to mark or null }. */

function margins(size, th, { right = 16, colorbar: bar = false } = {}) {
  const left = th.label + 10 + th.tick * 3.2;
  const bottom = th.tick + th.label + 16;
  const r = bar ? 12 + 12 + th.tick * 2.2 + th.label + 8 : right;
  return { left, top: 10, width: size.width - left - r, height: size.height - 10 - bottom };
}

function sep(words) { return words.lang === "zh" ? ["，", "："] : [", ", ": "]; }

const FIGURES = {
  pe_heatmap: {
    height: (w) => Math.min(Math.max(w * 0.5, 260), 380),
    draw(ctx, size, v, t, th) {
      const d = v.d_model, base = v.base, n = 128;
      const pe = sinusoidalEncoding(n, d, base);
      const box = margins(size, th, { colorbar: true });
      const ax = new Axes(ctx, box, linear(-0.5, d - 0.5), linear(n - 0.5, -0.5), th);
      ax.image(n, d, (r, k) => divergingPacked(pe[r * d + k]));
      const xt = niceTicks(0, d - 1, Math.max(2, Math.floor(box.width / 70))).filter((x) => Number.isInteger(x));
      const yt = niceTicks(0, n - 1, 4);
      ax.frame({ xticks: xt.map((x) => [x, String(x)]), yticks: yt.map((y) => [y, String(y)]),
        xlabel: t.xlabel, ylabel: t.ylabel, grid: false });
      colorbar(ctx, th, box, (f) => diverging(2 * f - 1 - 1e-9), [[0, "−1"], [0.5, "0"], [1, "1"]]);
      const [comma, colon] = sep(t);
      return {
        title: `${t.title}${colon}d_model=${d}${comma}base=${formatValue(base)}`,
        pick(px, py) {
          if (!ax.inside(px, py)) return null;
          const k = Math.min(d - 1, Math.max(0, Math.round(ax.dataX(px))));
          const p = Math.min(n - 1, Math.max(0, Math.round(ax.dataY(py))));
          return { text: `${t.dimension} ${k}${comma}${t.position} ${p}${colon}${fixed(pe[p * d + k], 3)}`,
            at: [ax.px(k), ax.py(p)] };
        },
      };
    },
  },

  wavelengths: {
    height: (w) => Math.min(Math.max(w * 0.45, 250), 340),
    draw(ctx, size, v, t, th) {
      const d = v.d_model, base = v.base, seq = 128;
      const lam = sinusoidalWavelengths(d, base);
      const cols = Array.from(lam, (_, i) => 2 * i);
      const slow = lam.filter((l) => l > seq).length;
      const box = margins(size, th);
      const ax = new Axes(ctx, box, linear(-0.02 * d, 1.02 * d), log10(2, 3.2e7), th);
      const decades = ["10", "100", "1k", "10k", "100k", "1M", "10M"];
      ax.frame({ xticks: niceTicks(0, d, Math.max(2, Math.floor(box.width / 70))).map((x) => [x, String(x)]),
        yticks: decades.map((s, i) => [10 ** (i + 1), s]), xlabel: t.xlabel, ylabel: t.ylabel });
      const c = th.colors;
      ax.hline(seq, { color: c.accent, width: 1.2, dash: [6, 4] });
      ax.hline(2 * Math.PI, { color: c.grey, width: 1.2, dash: [2, 3] });
      ax.line(cols, lam, { color: c.sin, width: 2 });
      if (d <= 64) ax.dots(cols, lam, { color: c.sin, r: 2.5 });
      const [comma, colon] = sep(t);
      return {
        title: `${t.title}${colon}d_model=${d}${comma}base=${formatValue(base)} ` +
          `(${t.slowPairs.replace("{slow}", slow).replace("{total}", lam.length).replace("{length}", seq)})`,
        legend: [[c.sin, [], t.wavelength], [c.accent, [6, 4], `${t.seqLength} ${seq}`],
          [c.grey, [2, 3], `2π (${t.pair} 0)`]],
        pick(px, py) {
          if (!ax.inside(px, py)) return null;
          const i = Math.min(lam.length - 1, Math.max(0, Math.round(ax.dataX(px) / 2)));
          return { text: `${t.column} 2i = ${2 * i} (${t.pair} ${i})${colon}${t.wavelength} ${formatValue(lam[i])}`,
            at: [ax.px(2 * i), ax.py(lam[i])] };
        },
      };
    },
  },

  dot_product: {
    height: (w) => Math.min(Math.max(w * 0.45, 250), 340),
    draw(ctx, size, v, t, th) {
      const d = v.d_model, base = v.base, max = 256, window = 31;
      const ks = Array.from({ length: 2 * max + 1 }, (_, i) => i - max);
      const sim = sinusoidalDotProduct(ks, d, base).map((x) => x / (d / 2));
      const mean = runningMean(sim, window);
      const half = (window - 1) / 2;
      const box = margins(size, th);
      const ax = new Axes(ctx, box, linear(-max, max), linear(-0.7, 1.05), th);
      ax.frame({ xticks: niceTicks(-max, max, Math.max(2, Math.floor(box.width / 70))).map((x) => [x, String(x)]),
        yticks: [-0.5, 0, 0.5, 1].map((y) => [y, String(y)]), xlabel: t.xlabel, ylabel: t.ylabel });
      const c = th.colors;
      ax.hline(0, { color: c.grey, width: 0.8 });
      ax.line(ks, sim, { color: c.sin, width: 1.2 });
      ax.line(ks.slice(half, ks.length - half), mean, { color: c.accent, width: 2, dash: [6, 4] });
      const [comma, colon] = sep(t);
      return {
        title: `${t.title}${colon}d_model=${d}${comma}base=${formatValue(base)}`,
        legend: [[c.sin, [], "PE[p]·PE[p+k] / (d/2)"], [c.accent, [6, 4], `${t.runningMean} (${window})`]],
        pick(px, py) {
          if (!ax.inside(px, py)) return null;
          const k = Math.min(max, Math.max(-max, Math.round(ax.dataX(px))));
          const j = k + max, m = j - half >= 0 && j - half < mean.length ? mean[j - half] : null;
          return { text: `${t.distance} k = ${k}${colon}${fixed(sim[j], 3)}` +
            (m === null ? "" : `${comma}${t.runningMean} ${fixed(m, 3)}`), at: [ax.px(k), ax.py(sim[j])] };
        },
      };
    },
  },

  alibi_slopes: {
    height: (w) => Math.min(Math.max(w * 0.45, 250), 340),
    draw(ctx, size, v, t, th) {
      const n = v.num_heads, top = Math.max(16, n);
      const slopes = alibiSlopes(n);
      const c2 = Math.pow(2, Math.floor(Math.log2(n)));
      const heads = Array.from(slopes, (_, i) => i + 1);
      const box = margins(size, th);
      const ax = new Axes(ctx, box, linear(0.5, top + 0.5), { lo: 2 ** -9, hi: 1.5, map: Math.log2, unmap: (x) => 2 ** x }, th);
      const every = Math.max(1, Math.ceil(top / Math.max(2, Math.floor(box.width / 28))));
      ax.frame({ xticks: Array.from({ length: top }, (_, i) => i + 1).filter((h) => (h - 1) % every === 0).map((h) => [h, String(h)]),
        yticks: [0, -2, -4, -6, -8].map((e) => [2 ** e, e === 0 ? "1" : `1/${2 ** -e}`]), xlabel: t.xlabel, ylabel: t.ylabel });
      const c = th.colors;
      const naive = Array.from({ length: 200 }, (_, i) => 1 + (i / 199) * (n - 1));
      ax.line(naive, naive.map((h) => 2 ** (-8 * h / n)), { color: c.grey, width: 1, dash: [5, 4] });
      ax.dots(heads.slice(0, c2), Array.from(slopes.slice(0, c2)), { color: c.alibi, r: 5 });
      if (c2 < n) ax.dots(heads.slice(c2), Array.from(slopes.slice(c2)), { color: c.accent, r: 4.5, square: true });
      const [, colon] = sep(t);
      const legend = [[c.alibi, null, t.geometric.replace("{c}", c2)]];
      if (c2 < n) legend.push([c.accent, "square", t.oddTerms.replace("{c}", 2 * c2)]);
      // for a power of two the rule is the geometric sequence itself (the dots lie on it)
      legend.push([c.grey, [5, 4], c2 === n ? t.naiveUsed : t.naive]);
      return {
        title: `${t.title}${colon}num_heads=${n}`,
        legend,
        pick(px, py) {
          if (!ax.inside(px, py)) return null;
          const h = Math.round(ax.dataX(px));
          if (h < 1 || h > n) return null;
          const m = slopes[h - 1];
          return { text: `${t.head} ${h}${colon}${t.slope} m = ${slopeLabel(m)} = ${formatValue(m)}`,
            at: [ax.px(h), ax.py(m)] };
        },
      };
    },
  },

  alibi_bias: {
    height: (w) => Math.min(Math.max(w * 0.6, 300), 440),
    draw(ctx, size, v, t, th) {
      const n = v.num_heads, head = Math.min(v.head, n), L = v.length;
      const bias = alibiBias(n, L).subarray((head - 1) * L * L, head * L * L);
      const slope = alibiSlopes(n)[head - 1];
      const low = -(L - 1) * 2 ** -0.5;  // the most negative value any head shows
      const full = margins(size, th, { colorbar: true });
      const side = Math.min(full.width, full.height);
      const box = { left: full.left, top: full.top, width: side, height: side };
      const ax = new Axes(ctx, box, linear(-0.5, L - 0.5), linear(L - 0.5, -0.5), th);
      const masked = th.colors.masked.match(/[0-9a-f]{2}/gi).map((h) => parseInt(h, 16));
      const maskedPacked = pack(masked);
      ax.image(L, L, (i, j) => {
        const b = bias[i * L + j];
        return Number.isFinite(b) ? pack(viridis((b - low) / -low)) : maskedPacked;
      });
      const ticks = niceTicks(0, L - 1, 4).filter(Number.isInteger).map((x) => [x, String(x)]);
      ax.frame({ xticks: ticks, yticks: ticks, xlabel: t.xlabel, ylabel: t.ylabel, grid: false });
      colorbar(ctx, th, box, viridis, [[0, fixed(low, 1)], [1, "0"]], t.bias);
      const [comma, colon] = sep(t);
      return {
        title: `${t.heads}=${n}${comma}${t.head} ${head}${colon}${t.slope} = ${slopeLabel(slope)} = ` +
          `${formatValue(slope)}${comma}${t.length}=${L}`,
        pick(px, py) {
          if (!ax.inside(px, py)) return null;
          const j = Math.min(L - 1, Math.max(0, Math.round(ax.dataX(px))));
          const i = Math.min(L - 1, Math.max(0, Math.round(ax.dataY(py))));
          const b = bias[i * L + j];
          return { text: `${t.query} i = ${i}${comma}${t.key} j = ${j}${colon}` +
            (Number.isFinite(b) ? `${t.bias} ${formatValue(b)}` : `−∞ (${t.masked})`), at: [ax.px(j), ax.py(i)] };
        },
      };
    },
  },

  rope_angles: {
    height: (w) => Math.min(Math.max(w * 0.45, 250), 340),
    draw(ctx, size, v, t, th) {
      const { base, head_dim: d, position: m } = v;
      const angles = ropeAngles(m, d, base);
      const pairs = angles.length, turn = 2 * Math.PI;
      const box = margins(size, th);
      const ax = new Axes(ctx, box, linear(-0.5, pairs - 0.5), linear(-0.2, turn + 0.2), th);
      ax.frame({ xticks: niceTicks(0, pairs - 1, Math.max(2, Math.floor(box.width / 70)))
        .filter(Number.isInteger).map((x) => [x, String(x)]),
        yticks: [[0, "0"], [Math.PI / 2, "π/2"], [Math.PI, "π"], [1.5 * Math.PI, "3π/2"], [turn, "2π"]],
        xlabel: t.xlabel, ylabel: t.ylabel });
      const c = th.colors, turned = [], still = [];
      angles.forEach((a, i) => (a >= turn ? turned : still).push(i));
      const r = pairs > 128 ? 1.5 : 3;
      ax.dots(turned, turned.map((i) => angles[i] % turn), { color: c.rope, r });
      ax.dots(still, still.map((i) => angles[i]), { color: c.unturned, r });
      const [comma, colon] = sep(t);
      return {
        title: `${t.title}${colon}base=${formatValue(base)}${comma}head_dim=${d}${comma}position=${m}`,
        legend: [[c.rope, null, t.turned.replace("{n}", turned.length)],
          [c.unturned, null, t.still.replace("{n}", still.length)]],
        pick(px, py) {
          if (!ax.inside(px, py)) return null;
          const i = Math.min(pairs - 1, Math.max(0, Math.round(ax.dataX(px))));
          const a = angles[i];
          return { text: `${t.pair} ${i}${colon}m·θᵢ = ${formatValue(a)} rad` +
            `${comma}${t.turns.replace("{n}", formatValue(a / turn))}${comma}mod 2π = ${fixed(a % turn, 3)}`,
          at: [ax.px(i), ax.py(a % turn)] };
        },
      };
    },
  },

  frequency_ratios: {
    height: (w) => Math.min(Math.max(w * 0.5, 270), 360),
    draw(ctx, size, v, t, th) {
      const { factor: s, base } = v, d = 128, L0 = 4096;
      const theta = ropeFrequencies(d, base);
      const table = {
        linear: piFrequencies(d, base, s), ntk: ntkFrequencies(d, base, s),
        dynamic: dynamicFrequencies(d, base, s, L0, s * L0), yarn: yarnFrequencies(d, base, s, L0),
        llama3: llama3Frequencies(d, base, s, L0),
      };
      const ratios = {};
      let lowest = 1;
      for (const [k, f] of Object.entries(table)) {
        ratios[k] = f.map((x, i) => x / theta[i]);
        lowest = Math.min(lowest, ...ratios[k]);
      }
      const pairs = Array.from(theta, (_, i) => i);
      const box = margins(size, th);
      const ax = new Axes(ctx, box, linear(-1, pairs.length), log10(0.6 * lowest, 1.7), th);
      const ticks = [[1, "1"], [1 / s, `1/${formatValue(s)}`]];
      if (lowest < 0.8 / s) ticks.push([lowest, `1/${Math.round(1 / lowest)}`]);
      ax.frame({ xticks: niceTicks(0, pairs.length - 1, Math.max(2, Math.floor(box.width / 70)))
        .map((x) => [x, String(x)]), yticks: ticks, xlabel: t.xlabel, ylabel: "θ′ᵢ / θᵢ" });
      const c = th.colors;
      ax.hline(1 / s, { color: c.grey, width: 1, dash: [2, 3] });
      const cut = (d * Math.log(L0 / (2 * Math.PI))) / (2 * Math.log(base));
      if (cut >= 0 && cut <= pairs.length - 1) ax.vline(cut, { color: c.grey, width: 1, dash: [2, 3] });
      const dashes = { linear: [], ntk: [], dynamic: [2, 2], yarn: [], llama3: [8, 3, 2, 3] };
      for (const k of Object.keys(table)) ax.line(pairs, ratios[k], { color: c[k], width: 2, dash: dashes[k] });
      const [comma, colon] = sep(t);
      const legend = Object.keys(table).map((k) => [c[k], dashes[k], t.methods[k]]);
      if (cut >= 0 && cut <= pairs.length - 1) legend.push([c.grey, [2, 3], t.cut]);
      return {
        title: `${t.title}${colon}s=${formatValue(s)}${comma}base=${formatValue(base)}${comma}L0=${L0}`,
        legend,
        pick(px, py) {
          if (!ax.inside(px, py)) return null;
          const i = Math.min(pairs.length - 1, Math.max(0, Math.round(ax.dataX(px))));
          const parts = Object.keys(table).map((k) => `${t.methods[k]} ${formatValue(ratios[k][i])}`);
          return { text: `${t.pair} ${i}${colon}${parts.join(comma)}`, at: [ax.px(i), ax.py(ratios.yarn[i])] };
        },
      };
    },
  },
};

/** The figure kinds this module draws. */
export const KINDS = Object.keys(FIGURES);

/* ---------------------------------------------------------------- controls ------------ */

/* A slider over every value a control allows: its track is linear or logarithmic in the
 * value, the value it gives is snapped (integer, even integer, 3 significant digits), and
 * the arrow keys step to the next value that differs (PageUp/PageDown: ten steps). */
function slider(spec, value, words, onChange, uid) {
  const wrap = document.createElement("div");
  wrap.className = "posenc-slider posenc-live-slider";
  const label = document.createElement("label");
  label.className = "posenc-slider-label";
  label.textContent = words.controls[spec.name] || spec.name;
  const input = document.createElement("input");
  input.type = "range";
  input.className = "posenc-live-input";
  input.id = `posenc-live-${uid}-${spec.name}`;
  input.name = spec.name;
  label.htmlFor = input.id;
  const out = document.createElement("output");
  out.className = "posenc-slider-readout";
  out.htmlFor = input.id;
  const STEPS = 1000;
  input.min = "0"; input.max = String(STEPS); input.step = "1";
  let lo = spec.min, hi = spec.max;
  const log = spec.scale === "log";
  const toPos = (x) => Math.round(STEPS * (log ? Math.log(x / lo) / Math.log(hi / lo) : (x - lo) / (hi - lo)));
  const fromPos = (p) => { const f = p / STEPS; return log ? lo * Math.pow(hi / lo, f) : lo + f * (hi - lo); };
  const clamp = (x) => Math.min(hi, Math.max(lo, x));
  let current = value;
  function show(x) {
    current = x;
    input.value = String(toPos(x));
    out.textContent = formatValue(x);
    input.setAttribute("aria-valuetext", `${label.textContent} ${formatValue(x)}`);
  }
  function choose(x) {
    x = clamp(snap(x, spec.snap));
    if (x === current) { show(x); return; }
    show(x);
    onChange(spec.name, x);
  }
  input.addEventListener("input", () => choose(fromPos(Number(input.value))));
  // the arrow keys: the next value the control takes; PageUp/PageDown: a twentieth of the
  // track; Home/End: the ends
  input.addEventListener("keydown", (e) => {
    const arrow = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 }[e.key];
    const page = { PageUp: 1, PageDown: -1 }[e.key];
    if (e.key === "Home" || e.key === "End") { e.preventDefault(); choose(e.key === "Home" ? lo : hi); return; }
    if (arrow) { e.preventDefault(); choose(neighbour(current, arrow, spec.snap)); return; }
    if (!page) return;
    e.preventDefault();
    const next = fromPos(toPos(current) + (page * STEPS) / 20);
    choose(snap(next, spec.snap) === current ? neighbour(current, page, spec.snap) : next);
  });
  wrap.append(label, input, out);
  show(value);
  return { el: wrap, set: show, setMax(m) { hi = m; if (current > hi) choose(hi); else show(current); }, input };
}

/* ---------------------------------------------------------------- render -------------- */

let uidCounter = 0;

/* The figure's layout, once per document (the site's posenc.css styles the sliders' track and
 * handle; Jupyter gets this alone). Sizes in em: they follow the reader's text size. */
const STYLE = `
.posenc-live { margin: 0.5em 0 1em; max-width: 100%; }
.posenc-live-controls { display: flex; flex-direction: column; gap: 0.25em; }
.posenc-live-slider { display: flex; align-items: center; gap: 0.75em; width: min(100%, 34em); }
.posenc-live-slider label { min-width: 6em; font-weight: 600; margin: 0; }
.posenc-live-slider input[type="range"] { flex: 1; min-width: 0; min-height: 24px; }
.posenc-live-slider output { min-width: 4.5em; font-variant-numeric: tabular-nums; }
.posenc-live-title { font-weight: 600; margin: 0.5em 0 0.25em; overflow-wrap: anywhere; }
.posenc-live-legend { display: flex; flex-wrap: wrap; gap: 0.2em 1.2em; font-size: 0.9em; margin: 0.3em 0; }
.posenc-live-legend:empty { display: none; }
.posenc-live-key { display: inline-flex; align-items: center; gap: 0.45em; }
.posenc-live-swatch { display: inline-block; width: 1.6em; border-top: 2px solid; }
.posenc-live-readout { display: block; min-height: 1.6em; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
`;

function addStyle(el) {
  const doc = el.ownerDocument || document;
  if (doc.getElementById("posenc-live-style")) return;
  const style = doc.createElement("style");
  style.id = "posenc-live-style";
  style.textContent = STYLE;
  (doc.head || doc.documentElement).appendChild(style);
}

/** Draw the model's figure into el (anywidget's render; posenc-widgets.js calls it on the
 * site with the same kind of model). Returns a cleanup function. */
export function render({ model, el }) {
  const kind = model.get("kind");
  const figure = FIGURES[kind];
  const all = model.get("text") || {};
  const site = globalThis.posencText;
  const lang = site && all[site.lang] ? site.lang : (all.en ? "en" : Object.keys(all)[0]);
  const words = Object.assign({ lang, controls: {} }, all[lang] || {});
  const root = document.createElement("div");
  root.className = "posenc-live";
  el.appendChild(root);
  if (!figure) {
    const p = document.createElement("p");
    p.className = "posenc-widget-note";
    p.textContent = words.unknown || `posenc-live.js draws no figure "${kind}"`;
    root.appendChild(p);
    return () => root.remove();
  }
  addStyle(root);
  const uid = ++uidCounter;
  const values = Object.assign({}, model.get("values"));
  const controls = model.get("controls") || [];
  const title = document.createElement("p");
  title.className = "posenc-live-title";
  title.id = `posenc-live-${uid}-title`;
  const panel = document.createElement("div");
  panel.className = "posenc-live-controls";
  const stage = document.createElement("div");
  stage.className = "posenc-live-stage";
  const canvas = document.createElement("canvas");
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-labelledby", title.id);
  const overlay = document.createElement("canvas");
  overlay.className = "posenc-live-overlay";
  overlay.setAttribute("aria-hidden", "true");
  stage.append(canvas, overlay);
  const legend = document.createElement("div");
  legend.className = "posenc-live-legend";
  const readout = document.createElement("output");
  readout.className = "posenc-live-readout";
  readout.textContent = words.hint || "";
  readout.htmlFor = canvas.id = `posenc-live-${uid}-canvas`;
  const sliders = {};
  for (const spec of controls) {
    const s = slider(spec, values[spec.name], words, (name, x) => {
      values[name] = x;
      for (const other of controls) {
        if (other.max_from === name) sliders[other.name].setMax(x);
      }
      draw();
      model.set("values", Object.assign({}, values));
      if (model.save_changes) model.save_changes();
    }, uid);
    sliders[spec.name] = s;
    panel.appendChild(s.el);
  }
  for (const spec of controls) if (spec.max_from) sliders[spec.name].setMax(values[spec.max_from]);
  root.append(panel, title, stage, legend, readout);
  Object.assign(root.style, { maxWidth: "100%" });
  Object.assign(stage.style, { position: "relative", width: "100%", touchAction: "pan-y" });
  Object.assign(canvas.style, { display: "block", width: "100%" });
  Object.assign(overlay.style, { position: "absolute", left: "0", top: "0", width: "100%", height: "100%", pointerEvents: "none" });

  let result = null, size = null, th = null;
  function draw() {
    const start = performance.now();
    const width = Math.max(240, Math.floor(stage.clientWidth || el.clientWidth || 640));
    const height = Math.round(figure.height(width));
    const dpr = Math.max(1, Math.min(3, globalThis.devicePixelRatio || 1));
    th = theme(root);
    const small = width < 480;
    Object.assign(th, { dpr, tick: small ? 12 : 13, label: small ? 13 : 14 });
    for (const c of [canvas, overlay]) {
      if (c.width !== width * dpr || c.height !== height * dpr) { c.width = width * dpr; c.height = height * dpr; }
      c.style.height = `${height}px`;
    }
    size = { width, height };
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    result = figure.draw(ctx, size, values, words, th);
    title.textContent = result.title;
    legend.replaceChildren(...(result.legend || []).map(([color, dash, text]) => {
      const item = document.createElement("span");
      item.className = "posenc-live-key";
      const swatch = document.createElement("span");
      swatch.className = "posenc-live-swatch";
      swatch.style.borderColor = color;
      if (dash === null || dash === "square") {
        Object.assign(swatch.style, { background: color, width: "0.6em", height: "0.6em",
          borderRadius: dash === null ? "50%" : "0", borderWidth: "0" });
      } else if (dash.length) swatch.style.borderTopStyle = "dashed";
      item.append(swatch, document.createTextNode(text));
      return item;
    }));
    // the readout follows the figure: re-picked where the pointer last was, or the hint
    if (last) show(last[0], last[1], true); else { clearMark(); readout.textContent = words.hint || ""; }
    const ms = performance.now() - start;
    root.dataset.drawMs = ms.toFixed(2);
    root.dataset.draws = String(Number(root.dataset.draws || 0) + 1);
  }
  function clearMark() {
    const o = overlay.getContext("2d");
    o.setTransform(1, 0, 0, 1, 0, 0);
    o.clearRect(0, 0, overlay.width, overlay.height);
  }
  // where the pointer last picked, in CSS px over the canvas (null: not yet)
  let last = null;
  function point(clientX, clientY) {
    if (!result) return;
    const r = canvas.getBoundingClientRect();
    show(clientX - r.left, clientY - r.top, false);
  }
  // The readout and mark at (px, py) of the figure as drawn now. Off the data a pointer
  // keeps the last value read; a redraw (a control moved) shows the hint instead.
  function show(px, py, redrawn) {
    const hit = result.pick(px, py);
    clearMark();
    if (!hit) {
      if (redrawn) { last = null; readout.textContent = words.hint || ""; }
      return;
    }
    last = [px, py];
    readout.textContent = hit.text;
    const o = overlay.getContext("2d");
    o.setTransform(th.dpr, 0, 0, th.dpr, 0, 0);
    o.strokeStyle = th.ink;
    o.lineWidth = 1.5;
    o.beginPath();
    o.arc(hit.at[0], hit.at[1], 6, 0, 2 * Math.PI);
    o.stroke();
  }
  const onPointer = (e) => point(e.clientX, e.clientY);
  const onTouch = (e) => { const t = e.touches && e.touches[0]; if (t) point(t.clientX, t.clientY); };
  stage.addEventListener("pointermove", onPointer);
  stage.addEventListener("pointerdown", onPointer);
  stage.addEventListener("touchstart", onTouch, { passive: true });
  stage.addEventListener("touchmove", onTouch, { passive: true });

  const onModel = () => {
    const next = model.get("values") || {};
    let changed = false;
    for (const k of Object.keys(next)) {
      if (values[k] !== next[k]) { values[k] = next[k]; changed = true; }
    }
    if (!changed) return;
    for (const spec of controls) sliders[spec.name].set(values[spec.name]);
    draw();
  };
  model.on("change:values", onModel);
  let lastWidth = 0;
  const resize = typeof ResizeObserver === "function" ? new ResizeObserver(() => {
    const w = Math.floor(stage.clientWidth);
    if (w && w !== lastWidth) { lastWidth = w; draw(); }
  }) : null;
  if (resize) resize.observe(stage);
  // the site's theme switch and the system's colour scheme
  const themeWatch = typeof MutationObserver === "function" ? new MutationObserver(draw) : null;
  if (themeWatch) themeWatch.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme", "class"] });
  const media = globalThis.matchMedia ? globalThis.matchMedia("(prefers-color-scheme: dark)") : null;
  if (media && media.addEventListener) media.addEventListener("change", draw);
  draw();
  return () => {
    if (resize) resize.disconnect();
    if (themeWatch) themeWatch.disconnect();
    if (media && media.removeEventListener) media.removeEventListener("change", draw);
    if (model.off) model.off("change:values", onModel);
    root.remove();
  };
}

export default { render };
