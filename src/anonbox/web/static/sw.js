// anonbox's service worker: shows a push notice, and opens (or focuses) its page on click.
// A notice holds only {title, body, url}; url is a path on this site.
"use strict";

self.addEventListener("push", function (event) {
  var notice = { title: "New anonymous message", body: "Open your inbox to read it", url: "/dashboard" };
  try {
    if (event.data) notice = Object.assign(notice, event.data.json());
  } catch (error) {
    // Not JSON: show the plain notice.
  }
  event.waitUntil(
    self.registration.showNotification(notice.title, {
      body: notice.body,
      icon: "/static/icons/icon-192.png",  // a raster icon: Android shows no SVG here
      tag: "anonbox-message",
      renotify: true,
      data: { url: notice.url },
    })
  );
});

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var path = (event.notification.data && event.notification.data.url) || "/dashboard";
  var target = new URL(path, self.location.origin);
  if (target.origin !== self.location.origin) target = new URL("/dashboard", self.location.origin);
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (windows) {
      for (var i = 0; i < windows.length; i++) {
        if (new URL(windows[i].url).pathname === target.pathname && "focus" in windows[i]) {
          return windows[i].focus();
        }
      }
      return self.clients.openWindow(target.href);
    })
  );
});
