// "Share" on an answer: the phone's share sheet with the card image where the browser can
// share files (navigator.canShare), else with the link; "Copy link" where the page may
// write to the clipboard. "Download card" is a plain link and needs nothing from here.
(function () {
  "use strict";
  // The page's texts in its language (static/texts.js), English where one is missing.
  var t = window.anonboxText || function (key, fallback) { return fallback; };
  var copied = t("copied", "Link copied.");
  var failed = t("select_and_copy_url", "Select the link and copy it:");
  function bind(box) {
    if (box.dataset.bound) return; // bound before a swap (inplace.js) kept it
    box.dataset.bound = "1";
    var share = box.querySelector("[data-share]");
    var copy = box.querySelector("[data-share-copy]");
    var status = box.querySelector(".share-status");
    var url = new URL(box.dataset.shareUrl, window.location.href).href;
    var card = box.dataset.shareCard;

    function cardFile() {
      return fetch(card, { credentials: "same-origin" }).then(function (response) {
        if (!response.ok) throw new Error("no card");
        return response.blob();
      }).then(function (blob) {
        return new File([blob], "anonbox-card.png", { type: "image/png" });
      });
    }

    if (share && typeof navigator.share === "function") {
      share.hidden = false;
      share.addEventListener("click", function () {
        var files = typeof navigator.canShare === "function" ? cardFile() : Promise.reject();
        files.then(function (file) {
          if (navigator.canShare({ files: [file] })) {
            return navigator.share({ files: [file], url: url });
          }
          return navigator.share({ url: url });
        }, function () {
          return navigator.share({ url: url });
        }).catch(function (error) {
          if (error && error.name === "AbortError") return;  // the person closed the sheet
          status.textContent = failed + " " + url;
        });
      });
    }
    if (copy && navigator.clipboard && window.isSecureContext) {
      copy.hidden = false;
      copy.addEventListener("click", function () {
        navigator.clipboard.writeText(url).then(
          function () { status.textContent = copied; },
          function () { status.textContent = failed + " " + url; }
        );
      });
    }
  }
  function bindAll() {
    Array.prototype.forEach.call(document.querySelectorAll(".share-actions"), bind);
  }
  bindAll();
  document.addEventListener("anonbox:swapped", bindAll); // a page put in place by inplace.js
})();
