// The stream overlay keeps the question current: server-sent events from the live fan-out
// (web/pages/stream.py). The text is set as text, never as markup.
(function () {
  "use strict";
  var question = document.getElementById("question");
  var label = document.querySelector(".overlay-label");
  if (!question || !window.EventSource) return;
  var events = new EventSource(question.getAttribute("data-events"));
  events.addEventListener("question", function (event) {
    var text = JSON.parse(event.data).question;
    question.textContent = text || "";
    question.hidden = !text;
    if (label) label.hidden = !text;
  });
  events.addEventListener("revoked", function () {
    events.close();
    question.textContent = "";
    question.hidden = true;
    if (label) label.hidden = true;
  });
})();
