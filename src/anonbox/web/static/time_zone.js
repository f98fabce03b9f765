// The account page's time-zone picker: its suggestions come from /time-zones.json (the
// same for everyone, kept by the browser), this device's zone first, and one tap away when
// the account's differs. Without this file the field is a plain text field that takes a
// zone's name or its city ("seoul"), which the server understands the same.
(function () {
  "use strict";
  var field = document.getElementById("time-zone");
  var list = document.getElementById("time-zones");
  var button = document.getElementById("device-time-zone");
  if (!field || !list || !button || !window.fetch) return;
  var zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }
  fetch(list.getAttribute("data-source"), { credentials: "omit" })
    .then(function (answer) { return answer.ok ? answer.json() : []; })
    .then(function (choices) {
      var offered = false;
      var fragment = document.createDocumentFragment();
      choices.forEach(function (choice) {
        var option = document.createElement("option");
        option.value = choice[0];
        option.label = choice[1];
        if (choice[0] === zone) {
          offered = true;
          fragment.insertBefore(option, fragment.firstChild);
        } else {
          fragment.appendChild(option);
        }
      });
      list.appendChild(fragment);
      list.setAttribute("data-loaded", String(choices.length));
      if (!offered || field.value === zone) return; // an old alias the server does not offer
      button.querySelector("span").textContent = zone;
      button.hidden = false;
      button.addEventListener("click", function () {
        field.value = zone;
        button.hidden = true;
        field.focus();
      });
    })
    .catch(function () { /* the field still takes a typed zone or city */ });
})();
