/*
 * posenc-widgets.js -- renders the course's slider figures on the static site.
 *
 * A notebook executed for the site embeds its ipywidgets state as JSON
 * (<script type="application/vnd.jupyter.widget-state+json">) and marks each
 * widget output with <script type="application/vnd.jupyter.widget-view+json">.
 * The stock @jupyter-widgets/html-manager renders these, but it is a 3.6 MB
 * bundle (plus require.js and icon fonts), more than the course's whole page
 * budget. The slider figures of posenc.figures.sliders.slider_figure use only a handful
 * of models -- boxes, SelectionSlider, Stack, HTML and jslink -- so this file
 * renders exactly those, in a few KB, with no request to any other origin.
 * In live Jupyter the real widget manager renders the same widgets.
 *
 * A model this file does not know is shown as a short note, never as a dead
 * control.
 */
(function () {
  "use strict";

  var STATE_TYPE = "application/vnd.jupyter.widget-state+json";
  var VIEW_TYPE = "application/vnd.jupyter.widget-view+json";
  var PREFIX = "IPY_MODEL_";

  function ref(id) {
    return typeof id === "string" && id.indexOf(PREFIX) === 0 ? id.slice(PREFIX.length) : id;
  }

  /* A tiny observable model store: set() notifies views and links. */
  function Store(state) {
    this.models = {};
    this.listeners = {};
    for (var id in state) {
      this.models[id] = { name: state[id].model_name, state: state[id].state || {} };
    }
  }
  Store.prototype.get = function (id, key) {
    var m = this.models[id];
    return m ? m.state[key] : undefined;
  };
  Store.prototype.set = function (id, key, value) {
    var m = this.models[id];
    if (!m || m.state[key] === value) return;
    m.state[key] = value;
    (this.listeners[id + "." + key] || []).forEach(function (fn) { fn(value); });
  };
  Store.prototype.on = function (id, key, fn) {
    (this.listeners[id + "." + key] = this.listeners[id + "." + key] || []).push(fn);
  };
  Store.prototype.link = function () {
    for (var id in this.models) {
      var m = this.models[id];
      if (m.name !== "LinkModel" && m.name !== "DirectionalLinkModel") continue;
      var src = m.state.source, dst = m.state.target;
      if (!src || !dst) continue;
      this.forward(ref(src[0]), src[1], ref(dst[0]), dst[1]);
      if (m.name === "LinkModel") this.forward(ref(dst[0]), dst[1], ref(src[0]), src[1]);
    }
  };
  Store.prototype.forward = function (fromId, fromKey, toId, toKey) {
    var store = this;
    store.on(fromId, fromKey, function (v) { store.set(toId, toKey, v); });
  };

  var BOXES = { VBoxModel: "column", BoxModel: "column", HBoxModel: "row" };

  function render(store, id) {
    var m = store.models[id];
    if (!m) return note("missing widget " + id);
    var s = m.state;
    if (BOXES[m.name]) {
      var box = el("div", "posenc-box posenc-" + BOXES[m.name]);
      (s.children || []).forEach(function (c) { box.appendChild(render(store, ref(c))); });
      return box;
    }
    if (m.name === "SelectionSliderModel") return slider(store, id, s);
    if (m.name === "StackModel") return stack(store, id, s);
    if (m.name === "HTMLModel" || m.name === "HTMLMathModel" || m.name === "LabelModel") {
      var div = el("div", "posenc-html");
      if (m.name === "LabelModel") div.textContent = s.value || "";
      else div.innerHTML = s.value || "";
      store.on(id, "value", function (v) { div.innerHTML = v; });
      return div;
    }
    return note("This output (" + m.name + ") needs a live Jupyter kernel.");
  }

  function slider(store, id, s) {
    var labels = s._options_labels || [];
    var wrap = el("div", "posenc-slider");
    var label = el("label", "posenc-slider-label");
    var input = document.createElement("input");
    var readout = el("output", "posenc-slider-readout");
    var inputId = "posenc-slider-" + id;
    input.type = "range";
    input.id = inputId;
    input.min = "0";
    input.max = String(Math.max(labels.length - 1, 0));
    input.step = "1";
    input.value = String(s.index || 0);
    input.setAttribute("data-labels", JSON.stringify(labels));
    label.htmlFor = inputId;
    label.textContent = s.description || "";
    readout.htmlFor = inputId;
    function show(i) {
      readout.textContent = labels[i] === undefined ? "" : labels[i];
      input.setAttribute("aria-valuetext", (s.description || "") + " " + readout.textContent);
    }
    show(s.index || 0);
    input.addEventListener("input", function () {
      var i = parseInt(input.value, 10);
      show(i);
      store.set(id, "index", i);
    });
    store.on(id, "index", function (i) { input.value = String(i); show(i); });
    wrap.appendChild(label);
    wrap.appendChild(input);
    wrap.appendChild(readout);
    return wrap;
  }

  /* Frames not on show are built and decoded in idle time after the page has
   * loaded, so that moving a slider only toggles which frame is displayed. */
  var warmQueue = [];
  function warmUp(deadline) {
    while (warmQueue.length && (!deadline || deadline.timeRemaining() > 2)) warmQueue.shift()();
    if (warmQueue.length) idle(warmUp);
    else document.documentElement.setAttribute("data-posenc-widgets", "warm");
  }
  function idle(fn) {
    if (window.requestIdleCallback) window.requestIdleCallback(fn, { timeout: 500 });
    else window.setTimeout(fn, 30);
  }

  function stack(store, id, s) {
    var div = el("div", "posenc-stack");
    var kids = (s.children || []).map(ref);
    var rendered = {};
    var current = null;
    function build(i) {
      if (!rendered[i]) {
        rendered[i] = render(store, kids[i]);
        rendered[i].style.display = "none";
        div.appendChild(rendered[i]);
        rendered[i].querySelectorAll("img").forEach(function (img) {
          if (img.decode) img.decode().catch(function () {});
        });
      }
      return rendered[i];
    }
    function show(i) {
      if (i === null || i === undefined || !kids[i]) return;
      var next = build(i);
      if (current !== null && rendered[current] !== next) rendered[current].style.display = "none";
      next.style.display = "";
      current = i;
    }
    show(s.selected_index);
    store.on(id, "selected_index", show);
    kids.forEach(function (_, i) { warmQueue.push(function () { build(i); }); });
    return div;
  }

  function el(tag, cls) {
    var e = document.createElement(tag);
    e.className = cls;
    return e;
  }

  function note(text) {
    var p = el("p", "posenc-widget-note");
    p.textContent = text;
    return p;
  }

  function main() {
    var stateTag = document.querySelector('script[type="' + STATE_TYPE + '"]');
    if (!stateTag) return;
    var store = new Store(JSON.parse(stateTag.textContent).state || {});
    store.link();
    document.querySelectorAll('script[type="' + VIEW_TYPE + '"]').forEach(function (tag) {
      var view = JSON.parse(tag.textContent);
      var root = el("div", "posenc-widget");
      root.appendChild(render(store, view.model_id));
      tag.parentNode.replaceChild(root, tag);
    });
    document.documentElement.setAttribute("data-posenc-widgets", "ready");
    idle(warmUp);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();
