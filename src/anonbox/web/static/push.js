// "Notify me on this device": register the service worker, ask for permission, subscribe
// with the service's VAPID key, and post the subscription in the page's own form (with
// its CSRF token). Without Push API support the button stays hidden.
(function () {
  "use strict";
  // The page's texts in its language (static/texts.js), English where one is missing.
  var t = window.anonboxText || function (key, fallback) { return fallback; };
  var form = document.getElementById("push-form");
  var button = document.getElementById("push-subscribe");
  var status = document.getElementById("push-status");
  if (!form || !button) return;
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    status.textContent = t("unsupported", "This browser cannot receive push notifications.");
    return;
  }
  button.hidden = false;

  function keyBytes(base64url) {
    var padded = base64url.replace(/-/g, "+").replace(/_/g, "/");
    padded += "====".slice(0, (4 - (padded.length % 4)) % 4);
    var raw = atob(padded);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  }

  // A browser without a reachable push service may never settle subscribe(): give up
  // after a while rather than leave the button greyed out for good.
  var SUBSCRIBE_SECONDS = 20;
  function inTime(promise) {
    return Promise.race([
      promise,
      new Promise(function (_resolve, reject) {
        setTimeout(function () {
          reject(new Error(t("unreachable", "Your browser could not reach its push service. Check the connection and try again; some browsers (private windows, some builds without Google services) cannot receive push notifications.")));
        }, SUBSCRIBE_SECONDS * 1000);
      }),
    ]);
  }

  function explained(error) {
    var text = error && error.message ? error.message : "";
    if (/permission denied|not allowed|denied/i.test(text) && !/push service/.test(text)) {
      return t("denied", "Notifications are not allowed for this site. Allow them in your browser's site settings (the icon beside the address), then try again. Private windows cannot receive them.");
    }
    return text || t("failed", "Could not subscribe.");
  }

  form.addEventListener("submit", function (event) {
    if (form.elements.subscription.value) return; // subscribed: let the form go
    event.preventDefault();
    button.disabled = true;
    status.textContent = t("asking", "Asking your browser…");
    Notification.requestPermission()
      .then(function (permission) {
        if (permission !== "granted") throw new Error("Notifications are not allowed for this site.");
        return navigator.serviceWorker.register("/sw.js", { scope: "/" });
      })
      .then(function () { return navigator.serviceWorker.ready; })
      .then(function (registration) {
        return inTime(registration.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: keyBytes(form.dataset.vapidKey),
        }));
      })
      .then(function (subscription) {
        form.elements.subscription.value = JSON.stringify(subscription.toJSON());
        form.submit();
      })
      .catch(function (error) {
        button.disabled = false;
        status.textContent = explained(error);
      });
  });
})();
