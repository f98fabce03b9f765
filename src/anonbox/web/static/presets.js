// The prompt presets on the dashboard's link forms: picking one copies its text into the
// prompt field, where it can still be edited before saving. Without JavaScript the pick is
// posted with the form and the server uses it (web.infra.forms.preset_choice); here the
// select goes back to "own words" once copied, so the (perhaps edited) field is saved.
"use strict";

(function () {
  function bind(select) {
    if (select.dataset.bound) return;
    select.dataset.bound = "1";
    var field = document.getElementById(select.getAttribute("data-fills"));
    if (!field) return;
    select.addEventListener("change", function () {
      var option = select.options[select.selectedIndex];
      if (!option || !option.value) return;
      field.value = option.textContent; // text, never HTML
      select.selectedIndex = 0;
      field.focus();
    });
  }
  function bindAll() {
    Array.prototype.forEach.call(document.querySelectorAll("select.prompt-preset"), bind);
  }
  bindAll();
  document.addEventListener("anonbox:swapped", bindAll); // a page put in place by inplace.js
})();
