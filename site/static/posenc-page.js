/*
 * posenc-page.js -- what the site does to every page, apart from the slider figures
 * (posenc-widgets.js): code lines that wrap with a hanging indent, accessibility fixes for
 * markup the course does not write itself, figures that open full-screen, and the theme's
 * back-to-top button kept off the figures. Its strings come from posenc-text.js.
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
  var THEME_SCROLLERS = ["pre", ".nboutput > .output_area", ".cell_output > .output",
    ".jp-RenderedHTMLCommon", ".pst-scrollable-table-container"].join(", ");
  var EQUATIONS = 'mjx-container[display="true"]';

  function keyboardReachesScrollers() {
    function mark(el) {
      if (el.matches(EQUATIONS)) {
        if (el.scrollWidth > el.clientWidth + 1) el.setAttribute("tabindex", "0");
        else if (el.getAttribute("tabindex") === "0") el.removeAttribute("tabindex");
      } else {
        el.tabIndex = el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight ? 0 : -1;
      }
    }
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
    keyboardReachesScrollers();  // after wrapCode: the code blocks as they will stay
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();
