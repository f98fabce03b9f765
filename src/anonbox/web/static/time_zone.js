// The account page's time-zone picker starts with this device's zone: first among the
// suggestions, and one tap away when the account's differs. Without this file the field
// is a plain text field with the zones as suggestions, which works the same.
(function () {
  "use strict";
  var field = document.getElementById("time-zone");
  var list = document.getElementById("time-zones");
  var button = document.getElementById("device-time-zone");
  if (!field || !list || !button || !window.Intl) return;
  var zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return; }
  var known = list.querySelector('option[value="' + zone.replace(/["\\]/g, "") + '"]');
  if (!zone || !known) return; // a zone the server does not offer (an old alias)
  list.insertBefore(known, list.firstChild);
  if (field.value === zone) return;
  button.querySelector("span").textContent = zone;
  button.hidden = false;
  button.addEventListener("click", function () {
    field.value = zone;
    button.hidden = true;
    field.focus();
  });
})();
