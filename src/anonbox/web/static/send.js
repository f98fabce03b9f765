// The send page, with JavaScript: a live character counter, and sending through the JSON
// API (POST /message/{link_id}) without reloading. Without JavaScript the form posts
// to the page itself and everything still works (docs/pages.md). While the link is under
// a flood the API asks for a proof of work: a Web Worker (pow.js) solves it and the
// message is sent again with the solution, without the sender doing anything. Every post
// asks for a receipt (?receipt=true), whose private link is shown once sent (copy.js
// gives it a copy button).
"use strict";

(function () {
  // The page's texts in its language (static/texts.js), English where one is missing.
  var t = window.anonboxText || function (key, fallback) { return fallback; };
  var form = document.getElementById("send-form");
  if (!form || !window.fetch) return;
  var textarea = document.getElementById("message");
  var counter = document.getElementById("counter");
  var count = document.getElementById("count");
  var button = document.getElementById("send");
  var status = document.getElementById("status");
  var max = parseInt(form.getAttribute("data-max"), 10) || 500;
  var api = form.getAttribute("data-api");
  var receiptBox = document.getElementById("receipt");
  var receiptUrl = document.getElementById("receipt-url");
  var copyStatus = document.getElementById("copy-receipt-status");
  var note = document.getElementById("limit-note");
  var ownLink = document.getElementById("own-link");

  // Count as the server does: Unicode code points after NFC normalisation. The spread
  // iterates code points (an emoji is one, not two UTF-16 units); a textarea's value
  // holds line breaks as one "\n", which is what is sent.
  function length(text) {
    return Array.from(text.normalize ? text.normalize("NFC") : text).length;
  }

  function update() {
    var n = length(textarea.value);
    count.textContent = String(n);
    var over = n > max;
    counter.classList.toggle("over", over);
    button.disabled = over;
    // Why the button is greyed out, said as the limit is passed (a live region): once, and
    // again only with the count when it changes.
    if (note) {
      var said = over ? t("limit_note", "A message can be up to " + max + " characters; this one has {count}. " +
        "Shorten it to send it.").replace("{count}", String(n)) : "";
      if (note.textContent !== said) note.textContent = said;
    }
    if (over) textarea.setAttribute("aria-invalid", "true");
    else textarea.removeAttribute("aria-invalid");
  }

  function show(kind, text) {
    status.textContent = "";
    var p = document.createElement("p");
    p.className = "notice " + kind;
    p.id = kind === "success" ? "sent" : kind === "working" ? "working" : "error";
    p.textContent = text; // never innerHTML: server text is data
    status.appendChild(p);
  }

  function problem(body, response) {
    var code = body && body.error ? body.error.code : "";
    var fields = (body && body.error && body.error.fields) || [];
    var field = fields.length ? fields[0].problem : "";
    if (code === "validation_failed" && field === "too_long") {
      return t("too_long", "Your message is longer than " + max + " characters: shorten it and send it again.");
    }
    if (code === "validation_failed" && (field === "too_short" || field === "blank")) {
      return t("write_first", "Write a message first.");
    }
    if (code === "link_paused") return t("paused", "This link is not accepting messages right now.");
    if (code === "rate_limited") {
      return t("too_fast", "You are sending too fast. Wait a moment and try again.");
    }
    // The API's message is English: another language says it in its own words.
    var english = (body && body.message) || "Something went wrong. Try again.";
    return document.documentElement.lang === "en" ? english : t("went_wrong", english);
  }

  function showReceipt(body) {
    var receipt = body && body.data && body.data.receipt;
    if (!receiptBox || !receiptUrl || !receipt || !receipt.url) return;
    receiptUrl.value = receipt.url; // a field's value, never HTML
    if (copyStatus) copyStatus.textContent = "";
    receiptBox.hidden = false;
  }

  textarea.addEventListener("input", update);
  update();

  function send(text, proof) {
    var headers = { "Content-Type": "application/json", Accept: "application/json" };
    if (proof) headers["X-Altcha"] = proof;
    return fetch(api + "?receipt=true", {
      method: "POST",
      headers: headers,
      body: JSON.stringify({ message_content: text }),
      credentials: "omit", // the API takes no cookies: the sender stays anonymous
    }).then(function (response) {
      return response.json().then(
        function (body) { return { response: response, body: body }; },
        function () { return { response: response, body: null }; }
      );
    });
  }

  // Resolves with the solution of the challenge, or null when this browser cannot solve it.
  function prove(challenge) {
    return new Promise(function (resolve) {
      if (!window.Worker || !window.crypto || !window.crypto.subtle) {
        resolve(null);
        return;
      }
      var worker = new Worker("/static/pow.js");
      worker.onmessage = function (event) {
        worker.terminate();
        resolve(event.data);
      };
      worker.onerror = function () {
        worker.terminate();
        resolve(null);
      };
      worker.postMessage(challenge);
    });
  }

  function needsProof(result) {
    var error = result.body && result.body.error;
    return result.response.status === 429 && error && error.code === "proof_of_work_required" &&
      error.challenge ? error.challenge : null;
  }

  // Send, and when the link is under a flood, prove and send once more.
  function sendProving(text) {
    return send(text, null).then(function (result) {
      var challenge = needsProof(result);
      if (!challenge) return result;
      show("working", t("proving", "This link is receiving a flood of messages. Checking that you are a " +
        "person, not a flood; this takes a moment…"));
      return prove(challenge).then(function (proof) {
        if (!proof) {
          return { response: result.response, body: { message: t("cannot_prove", "This link is receiving a " +
            "flood of messages and this browser cannot prove it is not one. Try again in a " +
            "few minutes.") } };
        }
        return send(text, proof);
      });
    });
  }

  // A link for signed-in senders only has no data-api: the API takes no session cookie,
  // so the form posts to the page itself, which knows the browser's sign-in.
  if (!api) return;
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (button.disabled) return;
    button.disabled = true;
    sendProving(textarea.value)
      .then(function (result) {
        if (result.response.status === 201) {
          textarea.value = "";
          show("success", t("sent", "Sent! Your message is on its way, anonymously."));
          showReceipt(result.body);
          if (ownLink) ownLink.hidden = false;
        } else {
          show("error", problem(result.body, result.response));
          textarea.focus();
        }
      })
      .catch(function () {
        show("error", t("unreachable", "Could not reach anonbox. Check your connection and try again."));
      })
      .then(function () {
        button.disabled = false;
        update();
      });
  });
})();
