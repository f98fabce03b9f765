// The stream overlay's question fits the screen: from the size of a short question, the
// font size steps down (2 px at a time, never under 14 px) until the card is
// inside the viewport; if it still is not, its line breaks give way (as on the share
// cards). Again whenever the question changes (stream.js sets it) or the source resizes.
(function () {
  "use strict";
  var question = document.getElementById("question");
  if (!question) return;
  var card = question.parentNode;
  var SMALLEST = 14;

  function sizeClass(text) {
    return text.length > 200 ? "longest" : text.length > 80 ? "long" : "short";
  }

  function outside() {
    var box = card.getBoundingClientRect();
    var root = document.documentElement;
    return box.top < 0 || box.left < 0 || box.bottom > window.innerHeight ||
      box.right > window.innerWidth || root.scrollHeight > window.innerHeight ||
      root.scrollWidth > window.innerWidth;
  }

  function stepDown() {
    var size = parseFloat(window.getComputedStyle(question).fontSize);
    while (outside() && size > SMALLEST) {
      size = Math.max(SMALLEST, size - 2);
      question.style.fontSize = size + "px";
    }
  }

  var fitting = false;
  function fit() {
    if (fitting) return;
    fitting = true;
    var text = question.textContent || "";
    question.removeAttribute("data-joined");
    question.style.fontSize = "";
    // From the size of a short question (the stylesheet's size for a long one fits its
    // longest text; most are shorter and fit larger), down.
    card.setAttribute("data-size", "short");
    var largest = window.getComputedStyle(question).fontSize;
    card.setAttribute("data-size", sizeClass(text));
    if (!question.hidden) {
      question.style.fontSize = largest;
      stepDown();
      if (outside()) {
        question.setAttribute("data-joined", "");
        question.style.fontSize = largest;
        stepDown();
      }
    }
    fitting = false;
  }

  if (window.MutationObserver) {
    new MutationObserver(function () {
      fit();
    }).observe(question, { childList: true, characterData: true, subtree: true, attributes: true, attributeFilter: ["hidden"] });
  }
  window.addEventListener("resize", fit);
  fit();
})();
