// Sharing an answer or the link (templates/share_macros.html):
// - "Share": the phone's share sheet with the card image as a file where the browser can
//   share files (navigator.canShare), else with the link and its text. The card is fetched
//   when its box comes into view, so a tap hands it to the sheet at once (Safari wants the
//   sheet opened in the tap itself).
// - "Mastodon / Misskey": asks once for the person's server (an in-page field, checked to be
//   a host name), keeps it on this device (localStorage) and opens
//   https://{server}/share?text=…, which both accept.
// - "Copy link" where the page may write to the clipboard.
// X, LINE, Bluesky and "Download card" are plain links and need nothing from here.
// The dashboard's link field (#share-url) is scrolled to its end, where the link's id is.
(function () {
  "use strict";
  // The page's texts in its language (static/texts.js), English where one is missing.
  var t = window.anonboxText || function (key, fallback) { return fallback; };
  var copied = t("copied", "Link copied.");
  var failed = t("select_and_copy_url", "Select the link and copy it:");
  var SERVER_KEY = "anonbox.share.server";
  // A host name: dot-separated labels of letters, digits and inner hyphens, the last not
  // all digits (no address, no port, no path). Punycode arrives here as xn-- labels.
  var HOST = /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?!\d+$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

  function remembered() {
    try { return window.localStorage.getItem(SERVER_KEY); } catch (e) { return null; }
  }
  function remember(server) {
    try { window.localStorage.setItem(SERVER_KEY, server); } catch (e) { /* private mode */ }
  }
  // "https://Mastodon.Social/@me", "@me@mastodon.social" or "mastodon.social" ->
  // "mastodon.social"; null if not a host name.
  function hostOf(typed) {
    var value = (typed || "").trim();
    var account = /^@?[^@\/\s]+@([^@\/\s]+)$/.exec(value); // "@me@host" -> "host"
    if (account) value = account[1];
    if (!value) return null;
    var host;
    try {
      host = new URL(/^https?:\/\//i.test(value) ? value : "https://" + value).hostname;
    } catch (e) {
      return null;
    }
    host = host.replace(/\.$/, "").toLowerCase();
    return HOST.test(host) ? host : null;
  }
  function fileName(card) {
    var parts = new URL(card, window.location.href).pathname.split("/").filter(function (part) {
      return part && part !== "a" && part !== "card.png";
    });
    return "anonbox-" + parts.join("-") + ".png";
  }

  function bind(box) {
    if (box.dataset.bound) return; // bound before a swap (inplace.js) kept it
    box.dataset.bound = "1";
    var share = box.querySelector("[data-share]");
    var copy = box.querySelector("[data-share-copy]");
    var status = box.querySelector(".share-status");
    var url = new URL(box.dataset.shareUrl, window.location.href).href;
    var text = box.dataset.shareText || "";
    var said = text ? text + "\n" + url : url;
    var card = box.dataset.shareCard;
    var file = null; // the card, once fetched
    var fetching = null;

    function cardFile() {
      if (!fetching) {
        fetching = fetch(card, { credentials: "same-origin" }).then(function (response) {
          if (!response.ok) throw new Error("no card");
          return response.blob();
        }).then(function (blob) {
          file = new File([blob], fileName(card), { type: "image/png" });
          box.dataset.cardReady = "1"; // for the tests: a tap now shares it at once
          return file;
        });
        fetching.catch(function () { fetching = null; }); // tried again at the tap
      }
      return fetching;
    }
    function linkOnly() { return text ? { text: text, url: url } : { url: url }; }
    function withFile(card) {
      if (card && navigator.canShare({ files: [card] })) {
        var data = linkOnly();
        data.files = [card];
        return data;
      }
      return linkOnly();
    }
    function sheet(data) {
      return navigator.share(data).catch(function (error) {
        if (error && error.name === "AbortError") return;  // the person closed the sheet
        status.textContent = failed + " " + url;
      });
    }

    if (share && typeof navigator.share === "function") {
      share.hidden = false;
      var files = typeof navigator.canShare === "function" && card;
      if (files && "IntersectionObserver" in window) {
        var seen = new IntersectionObserver(function (entries) {
          if (entries.some(function (entry) { return entry.isIntersecting; })) {
            seen.disconnect();
            cardFile().catch(function () {});
          }
        });
        seen.observe(box);
      }
      share.addEventListener("click", function () {
        if (!files) { sheet(linkOnly()); return; }
        if (file) { sheet(withFile(file)); return; } // in the tap itself
        cardFile().then(withFile, linkOnly).then(sheet);
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
    bindServer(box, said);
  }

  // Mastodon / Misskey: the first tap asks for the server, later taps go straight there.
  function bindServer(box, said) {
    var button = box.querySelector("[data-share-fedi]");
    var form = box.querySelector("[data-share-fedi-form]");
    var change = box.querySelector("[data-share-fedi-change]");
    if (!button || !form) return;
    var field = form.querySelector("input");
    var note = form.querySelector(".share-fedi-note");
    var asked = note.textContent;
    button.hidden = false;

    function open(server) {
      window.open("https://" + server + "/share?text=" + encodeURIComponent(said), "_blank", "noopener");
    }
    function showChange() {
      var server = remembered();
      change.hidden = !server;
      if (server) change.textContent = button.dataset.change.replace("{server}", server);
    }
    function ask() {
      form.hidden = false;
      button.setAttribute("aria-expanded", "true");
      field.value = remembered() || "";
      field.focus();
    }
    button.addEventListener("click", function () {
      var server = remembered();
      if (server && HOST.test(server)) { open(server); return; }
      if (form.hidden) { ask(); } else { form.requestSubmit(); }
    });
    change.addEventListener("click", ask);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var server = hostOf(field.value);
      if (!server) {
        field.setAttribute("aria-invalid", "true");
        note.textContent = note.dataset.invalid;
        field.focus();
        return;
      }
      field.removeAttribute("aria-invalid");
      note.textContent = asked;
      remember(server);
      form.hidden = true;
      button.setAttribute("aria-expanded", "false");
      refreshChanges();
      open(server);
    });
    showChange();
    box.anonboxShowChange = showChange;
  }
  function refreshChanges() { // every box on the page names the server now remembered
    Array.prototype.forEach.call(document.querySelectorAll(".share-actions"), function (box) {
      if (box.anonboxShowChange) box.anonboxShowChange();
    });
  }

  // The link's field shows its end (the link's id), not "https://anonbox.exa…".
  function linkField() {
    var field = document.getElementById("share-url");
    if (!field || document.activeElement === field) return;
    field.scrollLeft = field.scrollWidth;
    if (!field.dataset.bound) {
      field.dataset.bound = "1";
      field.addEventListener("blur", linkField);
    }
  }

  function bindAll() {
    Array.prototype.forEach.call(document.querySelectorAll(".share-actions"), bind);
    linkField();
  }
  bindAll();
  window.addEventListener("resize", linkField);
  document.addEventListener("anonbox:swapped", bindAll); // a page put in place by inplace.js
})();
