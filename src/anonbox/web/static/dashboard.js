// Live inbox: new messages arrive as server-sent events (JSON) and are added with
// textContent, never as HTML; messages deleted or moved to the filtered folder meanwhile
// (a "removed" event) are taken off. Without this file every page still works by reloading.
(function () {
  "use strict";
  // The page's texts in its language (static/texts.js), English where one is missing.
  var t = window.anonboxText || function (key, fallback) { return fallback; };
  // "Copy link": shown only where the page may write to the clipboard; bound again when
  // inplace.js puts a new page in place.
  function bind() {
    var share = document.getElementById("share-url");
    var copy = document.getElementById("copy-link");
    if (!share || !copy || copy.dataset.bound || !navigator.clipboard || !window.isSecureContext) return;
    copy.dataset.bound = "1";
    copy.hidden = false;
    copy.addEventListener("click", function () {
      var status = document.getElementById("copy-status");
      navigator.clipboard.writeText(share.value).then(
        function () { status.textContent = t("copied", "Link copied."); },
        function () { share.select(); status.textContent = t("select_and_copy", "Select the link and copy it."); }
      );
    });
  }
  bind();
  document.addEventListener("anonbox:swapped", bind);
})();

// Times read "3 minutes ago" in the page's language (Intl.RelativeTimeFormat), the exact
// time in the creator's zone on hover, and are brought up to date every minute: those the
// server wrote and those that arrive live. Older than a week, the server's date stays.
(function () {
  "use strict";
  var inbox = document.getElementById("inbox");
  if (!inbox || !window.Intl || !Intl.RelativeTimeFormat) return;
  var lang = document.documentElement.lang || "en";
  var zone = inbox.dataset.timeZone || "UTC";
  var relative = new Intl.RelativeTimeFormat(lang, { numeric: "auto" });
  // As core.i18n.exact_time writes it: weekday, day and time, no seconds; the year only
  // when not this year's; "UTC" after it only in UTC.
  var exact = { format: function (date) { return exactIn(zone, date); } };
  function exactIn(zoneName, date) {
    var year = new Intl.DateTimeFormat("en", { year: "numeric", timeZone: zoneName });
    var options = { weekday: "short", month: "short", day: "numeric", hour: "numeric", minute: "2-digit", timeZone: zoneName };
    if (year.format(date) !== year.format(new Date())) options.year = "numeric";
    var text = new Intl.DateTimeFormat(lang, options).format(date);
    return zoneName === "UTC" ? text + " UTC" : text;
  }
  // An account without a zone yet (just signed up): this browser's, sent once; times
  // on this page then read in it.
  var first = document.getElementById("first-time-zone");
  var browserZone = "";
  try { browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { /* none */ }
  if (first && browserZone && window.fetch && window.FormData) {
    first.elements.time_zone.value = browserZone;
    fetch(first.action, { method: "POST", body: new FormData(first), credentials: "same-origin" }).then(function (answer) {
      if (answer.ok) {
        zone = browserZone;
        inbox.dataset.timeZone = zone;
        sayAll();
      }
    }, function () { /* UTC until the next page */ });
  }
  var block = document.getElementById("page-texts");
  var justNow = "just now";
  try {
    justNow = (block && JSON.parse(block.getAttribute("data-texts")).just_now) || justNow;
  } catch (e) { /* English, then */ }
  var UNITS = [["day", 86400], ["hour", 3600], ["minute", 60]];

  function say(time) {
    var at = Date.parse(time.getAttribute("datetime") || "");
    if (isNaN(at)) return;
    var seconds = (at - Date.now()) / 1000;
    if (Math.abs(seconds) > 7 * 86400) return; // a date, as the server wrote it
    time.title = exact.format(new Date(at));
    if (Math.abs(seconds) < 45) {
      time.textContent = justNow;
      return;
    }
    for (var i = 0; i < UNITS.length; i++) {
      if (Math.abs(seconds) >= UNITS[i][1] || i === UNITS.length - 1) {
        time.textContent = relative.format(Math.round(seconds / UNITS[i][1]), UNITS[i][0]);
        return;
      }
    }
  }

  function sayAll() {
    document.querySelectorAll("main time[datetime]").forEach(say);
  }
  window.anonboxSayTime = say; // for the live inbox below
  setInterval(sayAll, 60 * 1000);
})();

(function () {
  "use strict";
  var inbox = document.getElementById("inbox");
  var template = document.getElementById("message-template");
  if (!inbox || !template || !window.EventSource) {
    return;
  }
  // Looked up when used: settings saved in place (inplace.js) put a new <main> here.
  function list() { return document.getElementById("messages"); }
  function unreadCount() { return document.getElementById("unread-count"); }
  var live = inbox.dataset.live === "true";
  var url = new URL(inbox.dataset.eventsUrl, window.location.href);
  if (inbox.dataset.after) {
    url.searchParams.set("after", inbox.dataset.after);
  }

  function messageNode(message) {
    var node = template.content.firstElementChild.cloneNode(true);
    node.id = "m-" + message.id;
    node.dataset.messageId = message.id;
    node.querySelectorAll("[href]").forEach(function (link) {
      link.setAttribute("href", link.getAttribute("href").replace("MESSAGE_ID", message.id));
    });
    node.querySelectorAll("[id], [for]").forEach(function (element) {
      ["id", "for"].forEach(function (name) {
        var value = element.getAttribute(name);
        if (value) {
          element.setAttribute(name, value.replace("MESSAGE_ID", message.id));
        }
      });
    });
    node.querySelector(".message-content").textContent = message.message_content;
    var time = node.querySelector("time");
    time.setAttribute("datetime", message.created_at);
    time.textContent = message.created_at;
    if (window.anonboxSayTime) window.anonboxSayTime(time);
    return node;
  }

  // Said to screen readers (an aria-live region): how many arrived since the page opened.
  var liveStatus = document.getElementById("live-status");
  var arrived = 0;
  function announce() {
    arrived += 1;
    if (!liveStatus) return;
    liveStatus.textContent = arrived === 1
      ? liveStatus.dataset.one
      : liveStatus.dataset.many.replace("{count}", String(arrived));
  }

  // The tab's title counts the unread messages, so a tab left open says when one comes.
  function retitle(count) {
    var total = count + Number(inbox.dataset.otherUnread || "0");
    var none = inbox.dataset.title;
    var some = inbox.dataset.titleUnread;
    if (!none || !some) return;
    document.title = total > 0 ? some.replace("{count}", String(total)) : none;
  }

  var source = new EventSource(url.toString());
  source.addEventListener("message", function (event) {
    var message = JSON.parse(event.data);
    if (document.querySelector('[data-message-id="' + message.id + '"]')) {
      return;
    }
    var unread = unreadCount();
    if (!unread || !list()) return;
    var count = Number(unread.dataset.count || "0") + 1;
    unread.dataset.count = String(count);
    unread.textContent = String(count);
    retitle(count);
    announce();
    // "Mark all as read" is offered once something is unread; it reads up to the newest
    // message shown, so one that arrives live (and is shown) moves it up (issue 41).
    var markRead = document.getElementById("mark-all-read");
    if (markRead) {
      markRead.hidden = false;
      if (live && message.id > markRead.elements.up_to.value) markRead.elements.up_to.value = message.id;
    }
    if (live) {
      list().prepend(messageNode(message));
      var empty = document.getElementById("inbox-empty");
      if (empty) {
        empty.remove();
      }
    }
  });
  source.addEventListener("removed", function (event) {
    var removed = JSON.parse(event.data);
    if (removed.filtered) {
      var filtered = document.getElementById("filtered-count");
      if (filtered) {
        filtered.textContent = String(Number(filtered.textContent || "0") + 1);
      }
    }
    var unread = unreadCount();
    var node = list() && list().querySelector('[data-message-id="' + removed.id + '"]');
    if (!node || !unread) {
      return;
    }
    if (node.classList.contains("unread")) {
      var count = Math.max(Number(unread.dataset.count || "0") - 1, 0);
      unread.dataset.count = String(count);
      unread.textContent = String(count);
      retitle(count);
    }
    node.remove();
  });
})();
