/*
 * posenc-page.js -- what the site does to every page, apart from the slider figures
 * (posenc-widgets.js): code lines that wrap with a hanging indent, accessibility fixes for
 * markup the course does not write itself, figures that open full-screen and keep their
 * text readable on a phone, the theme's back-to-top button kept off the figures, one switch
 * that shows or folds every check of a chapter, and a language switch that keeps the
 * reader's section. Its strings come from posenc-text.js.
 */
(function () {
  "use strict";

  var say = window.posencText.say;  // posenc-text.js

  function el(tag, cls) {
    var e = document.createElement(tag);
    e.className = cls;
    return e;
  }

  /* Code cells wrap within the column; a wrapped line continues 4 columns deeper than
   * its own indentation. Each line becomes a full-width inline-block with a hanging
   * indent; the newlines stay as text between them, so copying gives the code back. */
  function wrapCode() {
    document.querySelectorAll("div.cell_input div.highlight pre").forEach(function (pre) {
      if (pre.dataset.posencWrapped) return;
      pre.dataset.posencWrapped = "1";
      var lines = [[]];
      Array.prototype.slice.call(pre.childNodes).forEach(function (node) {
        node.textContent.split("\n").forEach(function (part, k) {
          if (k > 0) lines.push([]);
          if (!part) return;
          var piece = node.nodeType === 3 ? document.createTextNode(part) : node.cloneNode(false);
          if (node.nodeType !== 3) piece.textContent = part;
          lines[lines.length - 1].push(piece);
        });
      });
      pre.textContent = "";
      lines.forEach(function (pieces, k) {
        if (k > 0) pre.appendChild(document.createTextNode("\n"));
        if (!pieces.length) return;
        var text = pieces.map(function (n) { return n.textContent; }).join("");
        var hang = text.length - text.replace(/^ +/, "").length + 4;
        var line = el("span", "posenc-line");
        line.style.paddingLeft = hang + "ch";
        line.style.textIndent = -hang + "ch";
        pieces.forEach(function (n) { line.appendChild(n); });
        pre.appendChild(line);
      });
    });
  }

  /* Accessibility fixes for markup the course does not write itself.
   * - jupyterquiz's numeric answer box has a <label> that does not point at it.
   * - The theme's logo sits outside every landmark ("region" in axe-core): the primary
   *   sidebar that holds it becomes a labelled complementary landmark. */
  function labelQuizInputs(root) {
    // sphinx-togglebutton labels its buttons in English, whatever the page's language
    root.querySelectorAll('button.toggle-button[aria-label="Toggle hidden content"]')
      .forEach(function (button) { button.setAttribute("aria-label", say("toggleHidden")); });
    root.querySelectorAll(".Quiz input.Input-text").forEach(function (input) {
      var label = input.previousElementSibling;
      if (input.labels && input.labels.length) return;
      if (label && label.tagName === "LABEL" && input.id) label.htmlFor = input.id;
      else input.setAttribute("aria-label", say("yourAnswer"));
    });
  }
  function fixLandmarks() {
    var sidebar = document.querySelector(".bd-sidebar-primary");
    if (sidebar && !sidebar.getAttribute("role")) {
      sidebar.setAttribute("role", "complementary");
      sidebar.setAttribute("aria-label", say("contents"));
    }
    labelQuizInputs(document);
    if (!document.querySelector(".cell_output")) return;
    if (window.MutationObserver) {  // the questions are drawn by their own script, later
      var observer = new MutationObserver(function () { labelQuizInputs(document); });
      observer.observe(document.body, { childList: true, subtree: true });
      window.setTimeout(function () { observer.disconnect(); labelQuizInputs(document); }, 15000);
    }
  }

  /* A figure opens full-screen at its full resolution on click or tap: a modal <dialog>
   * over the page, the image at 1 CSS px per 2 image px (its text at the size it was drawn
   * for) or wider, scrolling sideways on a phone; pinch-zoom is the browser's own. A tap
   * on the image switches to fit-the-screen and back. Escape, the close button or the
   * browser's back closes it (opening pushes a history entry, so "back" does not leave
   * the page). */
  var FIGURES = "img.posenc-frame, .cell_output img";
  function openFigure(img) {
    var dialog = el("dialog", "posenc-lightbox");
    dialog.setAttribute("aria-label", say("fullSize") + (img.alt || ""));
    var close = el("button", "posenc-lightbox-close");
    close.type = "button";
    close.textContent = "×";
    close.setAttribute("aria-label", say("closeFigure"));
    var scroller = el("div", "posenc-lightbox-scroll");
    var big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt || "";
    big.className = "posenc-lightbox-img";
    var natural = (img.naturalWidth || img.width * 2) / 2;
    big.style.width = Math.max(natural, 0) + "px";
    big.addEventListener("click", function () { dialog.classList.toggle("posenc-fit"); });
    scroller.appendChild(big);
    dialog.appendChild(close);
    dialog.appendChild(scroller);
    document.body.appendChild(dialog);
    var pushed = false;
    function onPop() { if (dialog.open) { pushed = false; dialog.close(); } }
    dialog.addEventListener("close", function () {
      window.removeEventListener("popstate", onPop);
      dialog.remove();
      if (pushed) history.back();
      img.focus && img.focus();
    });
    close.addEventListener("click", function () { dialog.close(); });
    dialog.addEventListener("click", function (e) { if (e.target === dialog) dialog.close(); });
    try {
      history.pushState({ posencFigure: true }, "");
      pushed = true;
      window.addEventListener("popstate", onPop);
    } catch (err) { /* a file: URL may refuse: Escape and the button still close */ }
    dialog.showModal();
    document.documentElement.setAttribute("data-posenc-figure", "open");
    dialog.addEventListener("close", function () {
      document.documentElement.removeAttribute("data-posenc-figure");
    });
  }
  function figuresOpenFullScreen() {
    document.addEventListener("click", function (e) {
      var img = e.target.closest ? e.target.closest(FIGURES) : null;
      if (!img || !img.getAttribute("src") || !window.HTMLDialogElement) return;
      if (img.closest(".posenc-lightbox")) return;
      openFigure(img);
    });
  }

  /* Static figures keep their text readable on a narrow screen. Every static figure is drawn
   * at 2 device px per CSS px of the 688-px column (2 x 688 = 1376 px wide, at about
   * 200 dpi: src/posenc/course/figures/style.py), its smallest text 7 pt, i.e. 19.4 image px.
   * Shrunk to a phone's 358-px column that text would be 5 CSS px: the figure keeps a
   * minimum width at which it is MIN_FIGURE_TEXT_PX tall (637 CSS px for 1376 image px), in
   * a box that scrolls sideways; a tap still opens it full-size (openFigure). */
  var MIN_FIGURE_TEXT_PX = 9;
  var SMALLEST_FIGURE_TEXT_IMAGE_PX = 7 / 72 * 200;
  var STATIC_FIGURES = '.cell_output img[src*="_images/"]';
  function readableFigures() {
    document.querySelectorAll(STATIC_FIGURES).forEach(function (img) {
      if (img.closest(".posenc-widget, .posenc-figure-scroll")) return;
      var box = el("div", "posenc-figure-scroll");
      img.parentNode.insertBefore(box, img);
      box.appendChild(img);
      function size() {
        // before it loads: the width MyST-NB writes in its style (its CSS px, half its pixels)
        var natural = img.naturalWidth || 2 * (parseFloat(img.style.width) || 0);
        if (natural) {
          img.style.setProperty("--posenc-min-width",
            Math.ceil(natural * MIN_FIGURE_TEXT_PX / SMALLEST_FIGURE_TEXT_IMAGE_PX) + "px");
        }
      }
      size();
      img.addEventListener("load", size);
      // its height kept before it loads (posenc.css sets height: auto): a lazy figure that
      // arrived used to push the text below it down the page
      var w = parseFloat(img.style.width), h = parseFloat(img.style.height);
      if (w > 0 && h > 0) img.style.aspectRatio = "auto " + w + " / " + h;
    });
  }

  /* Checks folded. A chapter's cells that assert or check a claim carry the tags `check` and
   * `hide-input`: MyST-NB folds their code into a <details> whose summary reads "Show the
   * check". One switch under the chapter's title shows or folds all of them at once, and
   * says whether all are shown (aria-pressed). MyST-NB names each summary "Toggle hidden
   * content" (in English, whatever its words): its visible words are its name instead. */
  var CHECK_FOLDS = "div.cell.tag_check details.hide.above-input";
  function checksFolded() {
    document.querySelectorAll("div.cell details.hide > summary[aria-label]").forEach(
      function (summary) { summary.removeAttribute("aria-label"); });
    var folds = Array.prototype.slice.call(document.querySelectorAll(CHECK_FOLDS));
    var title = document.querySelector("article.bd-article h1");
    if (!folds.length || !title || document.querySelector(".posenc-checks-switch")) return;
    var bar = el("p", "posenc-checks-bar");
    var button = el("button", "posenc-checks-switch");
    button.type = "button";
    bar.appendChild(button);
    title.parentNode.insertBefore(bar, title.nextSibling);
    function show() {
      var all = folds.every(function (d) { return d.open; });
      button.setAttribute("aria-pressed", all ? "true" : "false");
      button.textContent = all ? say("hideChecks") : say("showChecks", String(folds.length));
    }
    button.addEventListener("click", function () {
      var open = button.getAttribute("aria-pressed") !== "true";
      folds.forEach(function (d) { d.open = open; });
      show();
    });
    // a fold opened or closed by itself ("toggle" does not bubble: caught on its way down)
    document.addEventListener("toggle", function (e) {
      if (folds.indexOf(e.target) >= 0) show();
    }, true);
    show();
  }

  /* The language switch (site/posenc_site/pages.py) keeps the reader's section: on click it
   * carries the section the reader is in (the last shown whose top has passed the top third
   * of the window) as "#posenc-section=<its index among the page's sections>,<its id>"; the
   * other edition's page scrolls there on arrival and puts that section's own id in the
   * address. The twin has the same sections in the same order, but its ids may differ (a
   * Chinese heading's can be "id3") and some repeat (each exercise's "exercise-content"): an
   * id decides only where it names one section and is not of Sphinx's "id<n>" kind. */
  var SECTIONS = "article.bd-article section";
  var CARRIED = /^#posenc-section=(\d+)(?:,(.*))?$/;
  function carriedSection(sections, index, id) {
    var at = sections[index];
    if (at && id && at.id === id) return at;
    var named = id && !/^id\d+$/.test(id)
      ? sections.filter(function (s) { return s.id === id; }) : [];
    if (named.length === 1) return named[0];
    // a section not shown (a folded solution's): the nearest shown one before it
    while (at && !(at.checkVisibility ? at.checkVisibility() : at.offsetParent)) {
      at = sections[sections.indexOf(at) - 1];
    }
    return at || null;
  }
  function languageSwitchKeepsTheSection() {
    var link = document.querySelector("a.posenc-lang-switch");
    if (link) {
      link.addEventListener("click", function () {
        var sections = document.querySelectorAll(SECTIONS);
        var pad = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0;
        var line = Math.max(pad, window.innerHeight / 3), here = -1;
        for (var i = 0; i < sections.length; i++) {
          var shown = sections[i].checkVisibility ? sections[i].checkVisibility()
            : sections[i].offsetParent !== null;
          if (shown && sections[i].getBoundingClientRect().top <= line) here = i;
        }
        var href = link.getAttribute("href").split("#")[0];
        if (here > 0 && window.scrollY > 0) {
          href += "#posenc-section=" + here + "," + encodeURIComponent(sections[here].id || "");
        }
        link.setAttribute("href", href);
      });
    }
    var carried = CARRIED.exec(window.location.hash);
    if (!carried) return;
    var sections = Array.prototype.slice.call(document.querySelectorAll(SECTIONS));
    var target = carriedSection(sections, Number(carried[1]),
                                carried[2] ? decodeURIComponent(carried[2]) : "");
    try {
      history.replaceState(history.state, "", window.location.pathname + window.location.search
                           + (target && target.id ? "#" + target.id : ""));
    } catch (err) { /* a file: URL may refuse: the address keeps the carried section */ }
    if (!target) return;
    // again as the page settles (fonts, equations, figures), until the reader moves it
    var moved = false;
    function stop() { moved = true; }
    ["wheel", "touchstart", "keydown", "mousedown"].forEach(function (type) {
      window.addEventListener(type, stop, { once: true, passive: true });
    });
    function go() { if (!moved) target.scrollIntoView({ block: "start" }); }
    go();
    window.addEventListener("load", go);
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(go);
    var mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(go);
    window.setTimeout(go, 1000);
  }

  /* The theme's "Back to top" button floats over the page: hide it while it would cover
   * a figure. */
  function backToTopNeverOverAFigure() {
    var button = document.getElementById("pst-back-to-top");
    if (!button) return;
    var pending = false;
    function check() {
      pending = false;
      button.classList.remove("posenc-over-figure");
      var b = button.getBoundingClientRect();
      if (!b.width) return;
      var over = Array.prototype.some.call(
        document.querySelectorAll(".posenc-widget, .cell_output img"), function (f) {
          var r = f.getBoundingClientRect();
          return r.left < b.right && r.right > b.left && r.top < b.bottom && r.bottom > b.top;
        });
      button.classList.toggle("posenc-over-figure", over);
    }
    function later() { if (!pending) { pending = true; window.requestAnimationFrame(check); } }
    window.addEventListener("scroll", later, { passive: true });
    window.addEventListener("resize", later);
    if (window.MutationObserver) {  // the theme shows it by changing its style
      new MutationObserver(later).observe(button, { attributes: true });
    }
    later();
  }

  // Whatever scrolls must be reachable by keyboard (axe: scrollable-region-focusable). The
  // theme gives a code block or an output a tab stop when it overflows, but only once the page
  // has not changed for 300 ms, which a busy page may not reach before it is read (axe caught
  // unmarked code cells on a loaded machine); MathJax's menu, which the site no longer loads,
  // made every display equation focusable. Both are marked here at once, by the theme's rule
  // for its blocks, and again whenever their size changes (MathJax's fonts arriving late on
  // a busy machine, the window): each block, and each equation's content, is watched.
  //
  // The same watch keeps what scrolls sideways visible as such (a phone's reader took outputs
  // that scrolled for outputs cut off): data-posenc-more says on which side more is hidden
  // ("left", "right", both), and posenc.css shades that edge. And a display equation that
  // fits the column at 0.7 of its size or more is drawn that much smaller instead (chapter 6's
  // first, 4 % too wide on a phone, lost its "i" off the edge; at 0.7 an equation's letters
  // are still 14 CSS px); a wider one scrolls.
  var THEME_SCROLLERS = ["pre", ".nboutput > .output_area", ".cell_output > .output",
    ".jp-RenderedHTMLCommon", ".pst-scrollable-table-container",
    ".posenc-figure-scroll"].join(", ");
  var EQUATIONS = 'mjx-container[display="true"]';
  var EQUATION_MIN_SCALE = 0.7;

  function fitEquation(m) {
    var math = m.firstElementChild;
    if (!math) return;
    if (!m.dataset.posencFont) m.dataset.posencFont = String(parseFloat(m.style.fontSize) || 100);
    var scale = Number(m.dataset.posencScale || 1);
    var s = getComputedStyle(m);
    var room = m.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    var natural = math.getBoundingClientRect().width / scale;  // its width at its own size
    var fit = natural > room + 1 && room / natural >= EQUATION_MIN_SCALE
      ? Math.floor(room / natural * 1000) / 1000 : 1;
    if (Math.abs(fit - scale) < 0.001) return;
    m.dataset.posencScale = String(fit);
    m.style.fontSize = Number(m.dataset.posencFont) * fit + "%";
  }

  function showWhatIsHidden(el) {
    var left = el.scrollLeft > 1;
    var right = el.scrollLeft + el.clientWidth < el.scrollWidth - 1;
    var more = (left ? "left " : "") + (right ? "right" : "");
    if (more.trim()) el.setAttribute("data-posenc-more", more.trim());
    else el.removeAttribute("data-posenc-more");
  }

  function keyboardReachesScrollers() {
    function mark(el) {
      if (el.matches(EQUATIONS)) {
        fitEquation(el);
        if (el.scrollWidth > el.clientWidth + 1) el.setAttribute("tabindex", "0");
        else if (el.getAttribute("tabindex") === "0") el.removeAttribute("tabindex");
      } else {
        el.tabIndex = el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight ? 0 : -1;
      }
      showWhatIsHidden(el);
    }
    document.addEventListener("scroll", function (e) {  // a block scrolled: its edges change
      var el = e.target;
      if (el.matches && el.matches(THEME_SCROLLERS + ", " + EQUATIONS)) showWhatIsHidden(el);
    }, { capture: true, passive: true });
    var watched = new WeakSet();
    var observer = window.ResizeObserver ? new ResizeObserver(function (entries) {
      entries.forEach(function (e) { mark(e.target.closest(EQUATIONS) || e.target); });
    }) : null;
    function watchAll() {
      document.querySelectorAll(THEME_SCROLLERS + ", " + EQUATIONS).forEach(function (el) {
        mark(el);
        if (!observer || watched.has(el)) return;
        watched.add(el);
        observer.observe(el, {box: "border-box"});
        if (el.matches(EQUATIONS) && el.firstElementChild) observer.observe(el.firstElementChild);
      });
    }
    watchAll();
    window.addEventListener("load", watchAll);
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(watchAll);
    var mj = window.MathJax;  // the equations exist once MathJax has typeset the page
    if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(watchAll);
    if (!observer) window.addEventListener("resize", watchAll);
  }

  function main() {
    fixLandmarks();
    figuresOpenFullScreen();
    backToTopNeverOverAFigure();
    wrapCode();
    readableFigures();
    checksFolded();
    keyboardReachesScrollers();  // after wrapCode and readableFigures: the blocks as they stay
    languageSwitchKeepsTheSection();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();
