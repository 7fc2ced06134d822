/*
 * posenc-text.js -- every string the site's scripts show or announce, in the page's
 * language (<html lang>: "zh-CN" on the Chinese pages). posenc-widgets.js and
 * posenc-page.js read them through posencText.say(key, name).
 * tests/test_frame_contract.py checks both editions have the same keys and the Chinese
 * has no English word, and that the other scripts write no UI string of their own.
 */
(function () {
  "use strict";

  var TEXT = {
    en: {
      needsKernel: "This output ({name}) needs a live Jupyter kernel.",
      frameFailed: "This frame could not be loaded; showing the previous one.",
      loading: "Loading the figure…",
      yourAnswer: "Your answer",
      contents: "Course contents",
      fullSize: "Figure, full size: ",
      closeFigure: "Close the full-size figure",
      missing: "missing widget {name}",
      toggleHidden: "Toggle hidden content",
      liveFailed: "This figure is drawn by a script of the site that did not load.",
      showChecks: "Show every check ({name})",
      hideChecks: "Hide every check"
    },
    zh: {
      needsKernel: "这个输出（{name}）需要运行中的 Jupyter 内核。",
      frameFailed: "这一帧加载失败，仍显示上一帧。",
      loading: "正在加载图…",
      yourAnswer: "你的答案",
      contents: "课程目录",
      fullSize: "原尺寸图：",
      closeFigure: "关闭原尺寸图",
      missing: "缺少组件 {name}",
      toggleHidden: "显示或隐藏内容",
      liveFailed: "这张图由本站的脚本绘制，但脚本没有加载成功。",
      showChecks: "显示全部检查代码（{name}）",
      hideChecks: "隐藏全部检查代码"
    }
  };
  var LANG = /^zh/i.test(document.documentElement.lang || "") ? "zh" : "en";
  function say(key, name) { return TEXT[LANG][key].replace("{name}", name || ""); }


  window.posencText = { say: say, lang: LANG };
})();
