// "Notify me on this device": register the service worker, ask for permission, subscribe
// with the service's VAPID key, and post the subscription in the page's own form (with
// its CSRF token). Without Push API support the button stays hidden.
(function () {
  "use strict";
  var form = document.getElementById("push-form");
  var button = document.getElementById("push-subscribe");
  var status = document.getElementById("push-status");
  if (!form || !button) return;
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    status.textContent = "This browser cannot receive push notifications.";
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

  form.addEventListener("submit", function (event) {
    if (form.elements.subscription.value) return; // subscribed: let the form go
    event.preventDefault();
    button.disabled = true;
    status.textContent = "Asking your browser…";
    Notification.requestPermission()
      .then(function (permission) {
        if (permission !== "granted") throw new Error("Notifications are not allowed for this site.");
        return navigator.serviceWorker.register("/sw.js", { scope: "/" });
      })
      .then(function () { return navigator.serviceWorker.ready; })
      .then(function (registration) {
        return registration.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: keyBytes(form.dataset.vapidKey),
        });
      })
      .then(function (subscription) {
        form.elements.subscription.value = JSON.stringify(subscription.toJSON());
        form.submit();
      })
      .catch(function (error) {
        button.disabled = false;
        status.textContent = error && error.message ? error.message : "Could not subscribe.";
      });
  });
})();
