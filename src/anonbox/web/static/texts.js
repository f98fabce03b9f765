// The page's texts in its language: JSON in a data attribute of #page-texts
// (templates/texts.html; no inline script, so the CSP stays strict). Loaded before the
// page's other scripts; each asks by key and keeps its own English as the fallback.
window.anonboxText = (function () {
  "use strict";
  var texts = {};
  var block = document.getElementById("page-texts");
  try {
    texts = block ? JSON.parse(block.getAttribute("data-texts")) : {};
  } catch (e) {
    texts = {};
  }
  return function (key, fallback) {
    return texts[key] || fallback;
  };
})();
