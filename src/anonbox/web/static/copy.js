// "Copy" buttons: <button data-copy="field-id" data-copy-status="status-id" hidden> copies
// the field's value at the moment of the click. Shown only where the page may write to
// the clipboard; without them (or without JavaScript) the link stays selectable in its field.
(function () {
  "use strict";
  // The page's texts in its language (static/texts.js), English where one is missing.
  var t = window.anonboxText || function (key, fallback) { return fallback; };
  if (!navigator.clipboard || !window.isSecureContext) return;
  var buttons = document.querySelectorAll("button[data-copy]");
  Array.prototype.forEach.call(buttons, function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    var status = document.getElementById(button.getAttribute("data-copy-status") || "");
    if (!field) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(field.value).then(
        function () { if (status) status.textContent = t("copied", "Link copied."); },
        function () {
          field.select();
          if (status) status.textContent = t("select_and_copy", "Select the link and copy it.");
        }
      );
    });
  });
})();
