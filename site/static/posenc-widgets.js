/*
 * posenc-widgets.js -- renders the course's slider figures on the static site.
 *
 * A notebook executed for the site embeds its ipywidgets state as JSON
 * (<script type="application/vnd.jupyter.widget-state+json">) and marks each
 * widget output with <script type="application/vnd.jupyter.widget-view+json">.
 * The stock @jupyter-widgets/html-manager renders these, but it is a 3.6 MB
 * bundle (plus require.js and icon fonts), more than the course's whole page
 * budget. The slider figures of posenc.course.figures.sliders.slider_figure use only a handful
 * of models -- boxes, SelectionSlider (values that are numbers), ToggleButtons (values that
 * are names: a row of radio buttons, or a <select> where the widget has the class
 * "posenc-menu"), Stack, HTML and jslink -- so this file renders exactly those, in a few KB,
 * with no request to any other origin.
 * In live Jupyter the real widget manager renders the same widgets.
 *
 * A model this file does not know is shown as a short note, never as a dead
 * control.
 *
 * Live figures (posenc.course.figures.live.LiveFigure, an anywidget): the page imports
 * the course's own ES module from _static/ (the build copies it there; the state's
 * `_esm` string is never run) and calls its render({model, el}) with a small model over
 * the embedded state. Only the module files in LIVE_MODULES are loaded.
 *
 * Frames on demand: see the comment above load() below.
 */
(function () {
  "use strict";

  var say = window.posencText.say;  // posenc-text.js

  var STATE_TYPE = "application/vnd.jupyter.widget-state+json";
  var VIEW_TYPE = "application/vnd.jupyter.widget-view+json";
  var PREFIX = "IPY_MODEL_";
  var MENU_CLASS = "posenc-menu";  // ToggleButtons with many names: a <select> here
  // the site's own ES modules, beside this script in _static/
  var LIVE_MODULES = { "posenc-live.js": true };
  var HERE = document.currentScript && document.currentScript.src;

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

  var BOXES = { "VBoxModel": "column", "BoxModel": "column", "HBoxModel": "row" };

  function render(store, id, path, figure) {
    path = path || [];
    var m = store.models[id];
    if (!m) return note(say("missing", id));
    var s = m.state;
    if (BOXES[m.name]) {
      var box = el("div", "posenc-box posenc-" + BOXES[m.name]);
      (s.children || []).forEach(function (c) {
        box.appendChild(render(store, ref(c), path, figure));
      });
      return box;
    }
    if (m.name === "SelectionSliderModel") return slider(store, id, s);
    if (m.name === "ToggleButtonsModel") {
      return (s._dom_classes || []).indexOf(MENU_CLASS) >= 0 ? menu(store, id, s)
        : buttons(store, id, s);
    }
    if (m.name === "AnyModel" && LIVE_MODULES[s.module] === true && HERE) return live(store, id, s);
    if (m.name === "StackModel") return stack(store, id, s, path, figure);
    if (m.name === "HTMLModel" || m.name === "HTMLMathModel" || m.name === "LabelModel") {
      var div = el("div", "posenc-html");
      if (m.name === "LabelModel") div.textContent = s.value || "";
      else div.innerHTML = s.value || "";
      store.on(id, "value", function (v) { div.innerHTML = v; });
      var frame = div.querySelector("img.posenc-frame");
      if (frame && figure) figure.frames.push({ img: frame, path: path });
      return div;
    }
    return note(say("needsKernel", m.name));
  }

  /* A live figure: the module's render() with an anywidget-like model over the store. */
  function live(store, id, s) {
    var div = el("div", "posenc-live-host");
    var model = {
      get: function (key) { return store.get(id, key); },
      set: function (key, value) { store.set(id, key, value); },
      on: function (event, fn) {
        if (event.indexOf("change:") === 0) store.on(id, event.slice(7), fn);
      },
      off: function () {},
      save_changes: function () {},
      send: function () {}
    };
    liveModule(s.module).then(function (mod) {
      var render = mod.render || (mod.default && mod.default.render);
      render({ model: model, el: div });
    }).catch(function () {
      div.appendChild(note(say("liveFailed")));
    });
    return div;
  }

  /* The module, imported; where the page cannot import one (read from file://, whose origin
   * is null), the same code as the classic script the build writes beside it. Loaded once. */
  var liveLoads = {};
  function liveModule(name) {
    if (liveLoads[name]) return liveLoads[name];
    liveLoads[name] = import(new URL(name, HERE).href).catch(function () {
      return new Promise(function (resolve, reject) {
        var tag = document.createElement("script");
        tag.src = new URL(name.replace(/\.js$/, ".classic.js"), HERE).href;
        tag.onload = function () { if (window.posencLive) resolve(window.posencLive); else reject(); };
        tag.onerror = reject;
        document.head.appendChild(tag);
      });
    });
    return liveLoads[name];
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

  /* A choice between a few names (Jupyter's ToggleButtons): a row of radio buttons, one tab
   * stop; the arrow keys move the choice as in any radio group, Home and End go to the ends. */
  function buttons(store, id, s) {
    var labels = s._options_labels || [];
    var wrap = el("div", "posenc-slider posenc-choice");
    var label = el("span", "posenc-slider-label");
    var group = el("div", "posenc-buttons");
    label.id = "posenc-buttons-" + id;
    label.textContent = s.description || "";
    group.setAttribute("role", "radiogroup");
    group.setAttribute("aria-labelledby", label.id);
    var items = labels.map(function (text, i) {
      var b = el("button", "posenc-button");
      b.type = "button";
      b.setAttribute("role", "radio");
      b.textContent = text;
      b.addEventListener("click", function () { pick(i, false); });
      group.appendChild(b);
      return b;
    });
    function show(i) {
      items.forEach(function (b, k) {
        b.setAttribute("aria-checked", k === i ? "true" : "false");
        b.tabIndex = k === i ? 0 : -1;
      });
    }
    function pick(i, focus) {
      show(i);
      if (focus) items[i].focus();
      store.set(id, "index", i);
    }
    group.addEventListener("keydown", function (e) {
      var now = items.indexOf(document.activeElement);
      var to = { ArrowRight: now + 1, ArrowDown: now + 1, ArrowLeft: now - 1, ArrowUp: now - 1,
                 Home: 0, End: items.length - 1 }[e.key];
      if (now < 0 || to === undefined) return;
      e.preventDefault();
      pick(Math.min(items.length - 1, Math.max(0, to)), true);
    });
    show(s.index || 0);
    store.on(id, "index", show);
    wrap.appendChild(label);
    wrap.appendChild(group);
    return wrap;
  }

  /* A choice between more names (ToggleButtons of class MENU_CLASS): a <select>. Left and
   * right step through it as they step a slider (a closed <select> ignores them in Chromium,
   * and on macOS opens its list on up and down instead). */
  function menu(store, id, s) {
    var labels = s._options_labels || [];
    var wrap = el("div", "posenc-slider posenc-choice");
    var label = el("label", "posenc-slider-label");
    var select = el("select", MENU_CLASS);
    select.id = "posenc-menu-" + id;
    label.htmlFor = select.id;
    label.textContent = s.description || "";
    labels.forEach(function (text, i) {
      var option = document.createElement("option");
      option.value = String(i);
      option.textContent = text;
      select.appendChild(option);
    });
    select.selectedIndex = s.index || 0;
    function pick() { store.set(id, "index", select.selectedIndex); }
    select.addEventListener("input", pick);
    select.addEventListener("change", pick);
    select.addEventListener("keydown", function (e) {
      var step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
      if (!step) return;
      e.preventDefault();
      select.selectedIndex = Math.min(labels.length - 1, Math.max(0, select.selectedIndex + step));
      pick();
    });
    store.on(id, "index", function (i) { select.selectedIndex = i; });
    wrap.appendChild(label);
    wrap.appendChild(select);
    return wrap;
  }

  /* Frames on demand. On the site, every frame but the one shown first has only a
   * data-src (site/posenc_site/pages.py moved its bytes into a file); in Jupyter all are
   * inline. A Stack switches to a branch only once the frame it would show has
   * loaded: until then the previous frame stays, under a visible loading state.
   *
   * Prefetch respects the reader: after the page has loaded, only figures in or near
   * the viewport (an IntersectionObserver) prefetch, nearest values first, and only
   * frames one slider away from the values shown, at most PREFETCH_STEPS steps, until
   * the reader touches that slider (then its whole range). Nothing is prefetched when
   * the browser asks to save data (Save-Data, or a 2g/3g connection). A file is
   * requested once: frames shared between figures reuse the first request. */
  var ROOT_PREFETCH = [];
  var MAX_PARALLEL = 4, inFlight = 0, PREFETCH_STEPS = 2;
  var requested = {};  // data-src -> true once some <img> has asked for it

  function saveData() {
    var c = navigator.connection || navigator.mozConnection || navigator.webkitConnection;
    if (!c) return false;
    return !!c.saveData || /(^|-)(2g|3g)$/.test(c.effectiveType || "");
  }

  function load(img, done) {
    /* Fetch img's frame (once); done(ok) when it is usable or has failed for good. */
    if (img.dataset.src && !img.getAttribute("src")) {
      img.dataset.tries = "0";
      requested[img.dataset.src] = true;
      img.setAttribute("src", img.dataset.src);
    }
    if (img.complete && img.naturalWidth > 0) { if (done) done(true); return; }
    if (!done) return;
    function ok() { off(); done(true); }
    function bad() {
      off();
      var tries = parseInt(img.dataset.tries || "0", 10);
      if (img.dataset.src && tries < 2) {  // a dropped connection: try again, twice
        img.dataset.tries = String(tries + 1);
        window.setTimeout(function () {
          img.setAttribute("src", img.dataset.src + "?retry=" + (tries + 1));
          load(img, done);
        }, 400 * (tries + 1));
      } else {
        img.dataset.failed = "1";
        done(false);
      }
    }
    function off() { img.removeEventListener("load", ok); img.removeEventListener("error", bad); }
    img.addEventListener("load", ok);
    img.addEventListener("error", bad);
    if (img.complete && img.getAttribute("src")) bad();  // it had already failed
  }

  function shownFrame(node) {
    /* The frame image that `node` displays: the one no hidden element hides. */
    var imgs = node.querySelectorAll("img");
    for (var k = 0; k < imgs.length; k++) {
      var hidden = false;
      for (var p = imgs[k]; p && p !== node; p = p.parentElement) {
        if (p.style.display === "none") { hidden = true; break; }
      }
      if (!hidden) return imgs[k];
    }
    return null;
  }

  function setLoading(stackDiv, on, failed) {
    var root = stackDiv.closest(".posenc-widget") || stackDiv;
    var n = parseInt(root.dataset.loading || "0", 10) + (on ? 1 : -1);
    if (n > 0) {
      root.dataset.loading = String(n);
      root.setAttribute("aria-busy", "true");
    } else {
      delete root.dataset.loading;
      root.removeAttribute("aria-busy");
    }
    var status = root.querySelector(".posenc-status");
    if (status) {
      status.textContent = failed ? say("frameFailed") : (n > 0 ? say("loading") : "");
      status.classList.toggle("posenc-failed", !!failed);
    }
  }

  var warmQueue = [], warm = false;
  function warmUp(deadline) {
    while (warmQueue.length && (!deadline || deadline.timeRemaining() > 2)) warmQueue.shift()();
    if (warmQueue.length) { idle(warmUp); return; }
    warm = true;
    document.documentElement.setAttribute("data-posenc-widgets", "warm");
    prefetchNext();
  }
  function idle(fn) {
    if (window.requestIdleCallback) window.requestIdleCallback(fn, { timeout: 500 });
    else window.setTimeout(fn, 30);
  }

  /* The page's prefetch state, for tests and benchmarks: data-posenc-prefetch is
   * "busy" while frames are wanted or in flight, "idle" when the policy wants no more
   * (each figure's root says the same for itself, and carries data-posenc-near while it
   * is in or near the viewport), "off" when the reader saves data. */
  function mark(node, state) {
    if (node.getAttribute("data-posenc-prefetch") !== state) {
      node.setAttribute("data-posenc-prefetch", state);
    }
  }

  var scheduled = false;
  function schedule() {
    if (!warm || scheduled) return;
    scheduled = true;
    idle(function () { scheduled = false; prefetchNext(); });
  }

  function prefetchNext() {
    if (saveData()) { mark(document.documentElement, "off"); return; }
    var pending = [];
    ROOT_PREFETCH.forEach(function (fig) {
      var jobs = fig.near ? fig.remaining() : [];
      if (fig.root) mark(fig.root, jobs.length || fig.inFlight ? "busy" : "idle");
      pending = pending.concat(jobs);
    });
    pending.sort(function (a, b) { return a.distance - b.distance; });
    while (inFlight < MAX_PARALLEL && pending.length) {
      var job = pending.shift();
      var img = job.img;
      if (img.getAttribute("src")) continue;  // asked for already (a shared frame, say)
      inFlight++;
      job.figure.inFlight++;
      load(img, function (img, fig) {
        return function (ok) {
          inFlight--;
          fig.inFlight--;
          if (ok && img.decode) img.decode().catch(function () {});
          schedule();
        };
      }(img, job.figure));
    }
    mark(document.documentElement, pending.length || inFlight ? "busy" : "idle");
  }

  function ready(img) { return img.complete && img.naturalWidth > 0; }

  function stack(store, id, s, path, figure) {
    var div = el("div", "posenc-stack");
    var kids = (s.children || []).map(ref);
    var rendered = {};
    var current = null, wanted = null, waiting = false;
    if (figure && !figure.levels[path.length]) figure.levels[path.length] = id;
    function build(i) {
      if (!rendered[i]) {
        rendered[i] = render(store, kids[i], path.concat([i]), figure);
        rendered[i].style.display = "none";
        div.appendChild(rendered[i]);
      }
      return rendered[i];
    }
    function swap(i) {
      var next = build(i);
      if (current !== null && rendered[current] !== next) rendered[current].style.display = "none";
      next.style.display = "";
      current = i;
    }
    function show(i) {
      if (i === null || i === undefined || !kids[i]) return;
      wanted = i;
      var img = shownFrame(build(i));
      // the first frame, a branch nobody sees, or a frame at hand: switch at once
      if (current === null || div.offsetParent === null || !img || ready(img)) {
        swap(i);
        return;
      }
      if (waiting) return;  // the load under way calls show(wanted) when it ends
      waiting = true;
      setLoading(div, true);
      load(img, function (ok) {
        waiting = false;
        setLoading(div, false, !ok);
        if (ok) show(wanted);
        else wanted = current;  // keep the previous frame; the status line says why
      });
    }
    show(s.selected_index);
    store.on(id, "selected_index", function (i) {
      show(i);
      if (figure) figure.moved(path.length);
    });
    kids.forEach(function (_, i) { warmQueue.push(function () { build(i); }); });
    return div;
  }

  /* One slider figure: its frames and the Stack of each slider level, for prefetching. */
  function Figure(store) {
    this.store = store;
    this.levels = [];
    this.frames = [];
    this.touched = {};
    this.near = !window.IntersectionObserver;  // without the observer: every figure
    this.inFlight = 0;
    this.root = null;
  }
  Figure.prototype.remaining = function () {
    /* Frames the policy wants now: one slider away from the values shown (at most
     * PREFETCH_STEPS steps on a slider not touched yet), not yet asked for. */
    var store = this.store, touched = this.touched;
    var now = this.levels.map(function (id) { return store.get(id, "selected_index") || 0; });
    var out = [];
    this.frames.forEach(function (f) {
      if (f.img.getAttribute("src") || f.img.dataset.failed || !f.img.dataset.src) return;
      if (requested[f.img.dataset.src]) return;  // a frame another figure shares: fetched once
      var moved = 0, distance = 0, far = false;
      f.path.forEach(function (i, k) {
        var d = Math.abs(i - (now[k] || 0));
        if (!d) return;
        moved++;
        distance += d;
        if (d > PREFETCH_STEPS && !touched[k]) far = true;
      });
      if (moved <= 1 && !far) out.push({ img: f.img, distance: distance, figure: this });
    }, this);
    return out;
  };
  Figure.prototype.moved = function (level) {
    this.touched[level] = true;
    schedule();  // re-sort by the new values
  };

  function watch(figures) {
    if (!window.IntersectionObserver) return;
    var byRoot = new Map();
    figures.forEach(function (f) { byRoot.set(f.root, f); });
    // "near": within one viewport height above or below what the reader sees
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        var f = byRoot.get(e.target);
        if (!f) return;
        // busy until the next prefetch step has looked at it
        if (e.isIntersecting && !f.near && !saveData()) mark(f.root, "busy");
        f.near = e.isIntersecting;
        f.root.toggleAttribute("data-posenc-near", f.near);
      });
      schedule();
    }, { rootMargin: "100% 0px 100% 0px" });
    figures.forEach(function (f) { observer.observe(f.root); });
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
      var figure = new Figure(store);
      figure.root = root;
      ROOT_PREFETCH.push(figure);
      root.appendChild(render(store, view.model_id, [], figure));
      var status = el("p", "posenc-status");
      status.setAttribute("role", "status");  // a polite live region: "Loading the figure…"
      root.appendChild(status);
      tag.parentNode.replaceChild(root, tag);
    });
    document.documentElement.setAttribute("data-posenc-widgets", "ready");
    watch(ROOT_PREFETCH);
    // prefetch after the page itself has loaded, in idle time
    if (document.readyState === "complete") idle(warmUp);
    else window.addEventListener("load", function () { idle(warmUp); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();
