// Forms that act in place: a form marked data-inplace (a reply, a like, a block, settings)
// is sent with fetch; the server answers as it does without JavaScript — a redirect to the
// page with what was done (?done=, web.infra.forms.Done) — and that page's <main> takes the
// place of this one's, with no reload and no jump to the top. What was done is said in a
// toast (role=status). A link marked data-undo-action (Delete…) hides its target and is
// sent only after a few seconds, unless Undo is pressed; without JavaScript it opens a page
// that asks first. After a swap, "anonbox:swapped" lets the other scripts bind anew.
(function () {
  "use strict";
  if (!window.fetch || !window.DOMParser || !window.FormData || !window.history) return;
  var t = window.anonboxText || function (key, fallback) { return fallback; };
  var UNDO_SECONDS = 5;

  var toast = document.createElement("div");
  toast.className = "toast";
  toast.id = "toast";
  toast.hidden = true;
  var said = document.createElement("p");
  said.setAttribute("role", "status");
  said.setAttribute("aria-live", "polite");
  var undo = document.createElement("button");
  undo.type = "button";
  undo.className = "secondary";
  undo.id = "undo";
  undo.textContent = t("undo", "Undo");
  undo.hidden = true;
  toast.appendChild(said);
  toast.appendChild(undo);
  document.body.appendChild(toast);
  var toastTimer = 0;

  function say(text, canUndo) {
    clearTimeout(toastTimer);
    said.textContent = text;
    undo.hidden = !canUndo;
    toast.hidden = false;
    if (!canUndo) {
      toastTimer = setTimeout(function () { toast.hidden = true; }, 6000);
    }
  }

  function withoutDone(href) {
    var url = new URL(href, window.location.href);
    url.searchParams.delete("done");
    return url;
  }

  function swap(html, href, focusAction) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var fresh = doc.querySelector("main");
    var old = document.querySelector("main");
    if (!fresh || !old) {
      window.location.assign(href);
      return;
    }
    fresh = document.adoptNode(fresh);
    var scroll = window.scrollY;
    old.replaceWith(fresh);
    document.title = doc.title;
    var url = withoutDone(href);
    var samePage = url.pathname === window.location.pathname;
    if (samePage) {
      window.history.replaceState(null, "", url.pathname + url.search + url.hash);
      window.scrollTo(0, scroll);
    } else {
      window.history.pushState(null, "", url.pathname + url.search + url.hash);
      window.scrollTo(0, 0);
    }
    var done = fresh.querySelector("#done");
    if (done && done.textContent.trim()) {
      say(done.textContent.trim(), false);
      done.classList.add("empty");
      done.textContent = "";
    }
    // Where to look next: what the page marks (data-focus: Share, once answered), else the
    // same button or form, pressed again. (A redirect's #fragment does not reach fetch.)
    var target = fresh.querySelector("[data-focus]");
    var reveal = !!target;
    if (!target && focusAction) {
      target = fresh.querySelector('[formaction="' + focusAction + '"]') ||
        fresh.querySelector('form[action="' + focusAction + '"] [type="submit"]');
    }
    if (target) {
      if (reveal) target.scrollIntoView({ block: "start" });
      target.focus({ preventScroll: !reveal });
    }
    document.dispatchEvent(new CustomEvent("anonbox:swapped"));
  }

  function problem(response) {
    return response.text().then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var text = doc.querySelector("main p");
      say((text && text.textContent.trim()) || t("failed", "That did not work. Try again."), false);
    });
  }

  function send(action, body, focusAction) {
    return fetch(action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { Accept: "text/html" },
    }).then(function (response) {
      if (!response.ok) return problem(response);
      return response.text().then(function (html) { swap(html, response.url, focusAction); });
    }, function () {
      say(t("failed", "That did not work. Try again."), false);
    });
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-inplace")) return;
    if ((form.method || "").toLowerCase() !== "post") return;
    event.preventDefault();
    var submitter = event.submitter || null;
    var action = (submitter && submitter.getAttribute("formaction")) || form.getAttribute("action");
    var body = new FormData(form);
    if (submitter && submitter.name) body.append(submitter.name, submitter.value);
    var buttons = submitter ? [submitter] : Array.prototype.slice.call(form.querySelectorAll("button"));
    buttons.forEach(function (b) { b.disabled = true; });
    send(action, new URLSearchParams(body), action).then(function () {
      buttons.forEach(function (b) { b.disabled = false; });
    });
  });

  // Block…: a link to a page that asks first (data-confirm-inplace). With scripts the
  // question comes here instead, under the link: the same page's card, fetched, whose
  // form is sent in place like any other; Cancel takes it away.
  document.addEventListener("click", function (event) {
    var link = event.target instanceof Element ? event.target.closest("a[data-confirm-inplace]") : null;
    if (!link) return;
    event.preventDefault();
    fetch(link.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var card = doc.querySelector("main section.card");
        var form = card && card.querySelector("form");
        if (!form) throw new Error("no question");
        var old = document.getElementById("confirm-inplace");
        if (old) old.remove();
        card = document.adoptNode(card);
        card.id = "confirm-inplace";
        card.classList.add("confirm-inplace");
        var title = card.querySelector("h1");
        if (title) { // a part of this page now, not a page of its own
          var heading = document.createElement("h2");
          heading.id = title.id;
          heading.textContent = title.textContent;
          title.replaceWith(heading);
        }
        form.setAttribute("data-inplace", "");
        var cancel = card.querySelector("#cancel");
        if (cancel) {
          cancel.addEventListener("click", function (e) {
            e.preventDefault();
            card.remove();
            link.focus();
          });
        }
        var place = link.closest(".message-actions") || link;
        place.insertAdjacentElement("afterend", card);
        var confirm = card.querySelector("#confirm");
        if (confirm) confirm.focus();
      })
      .catch(function () { window.location.assign(link.href); });
  });

  // Delete…: hidden at once, sent after UNDO_SECONDS unless undone; sent at once if the
  // page is left meanwhile (keepalive), so what was deleted stays deleted.
  var pending = null;

  function commit() {
    if (!pending) return;
    var now = pending;
    pending = null;
    clearTimeout(now.timer);
    toast.hidden = true;
    send(now.action, now.body, null);
  }

  undo.addEventListener("click", function () {
    if (!pending) return;
    clearTimeout(pending.timer);
    pending.hidden.forEach(function (node) { node.hidden = false; });
    var link = pending.link;
    pending = null;
    say(t("undone", "Nothing was deleted."), false);
    link.focus(); // back where the person was
  });

  window.addEventListener("pagehide", function () {
    if (!pending) return;
    fetch(pending.action, { method: "POST", body: pending.body, credentials: "same-origin", keepalive: true });
    pending = null;
  });

  document.addEventListener("click", function (event) {
    var link = event.target instanceof Element ? event.target.closest("a[data-undo-action]") : null;
    var tokens = document.getElementById("message-actions");
    if (!link || !tokens) return;
    event.preventDefault();
    commit(); // one pending at a time: the earlier one goes now
    var body = new URLSearchParams(new FormData(tokens));
    var then = link.getAttribute("data-undo-then");
    if (then) body.set("back", then);
    var hidden = Array.prototype.slice.call(document.querySelectorAll(link.getAttribute("data-undo-hides")));
    hidden.forEach(function (node) { node.hidden = true; });
    pending = {
      action: link.getAttribute("data-undo-action"),
      body: body,
      hidden: hidden,
      link: link,
      timer: setTimeout(commit, UNDO_SECONDS * 1000),
    };
    say(link.getAttribute("data-undo-text") || "", true);
    undo.focus();
  });
})();
