// Start Swagger UI on anonbox's own OpenAPI document. A file rather than an inline
// script, so the page keeps the strict Content Security Policy (script-src 'self').
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");

  // Swagger UI's markup leaves gaps that axe-core finds (docs/decisions.md); mend them
  // with attributes only, never moving React's nodes, whenever it renders more.
  function set(element, name, value) {
    if (element && element.getAttribute(name) !== value) element.setAttribute(name, value);
  }
  function labelled(element, label, id) {
    if (!element || !label) return;
    set(label, "id", label.id || id);
    set(element, "aria-labelledby", label.id);
  }
  function mend() {
    // Its headings go from h1 (the title) to h3 (the tags): each below h1 moves up one.
    root.querySelectorAll("h3, h4, h5, h6").forEach(function (heading) {
      set(heading, "aria-level", String(Number(heading.tagName.charAt(1)) - 1));
    });
    // Its operations are a <main>; the rest becomes named regions, so all is in one.
    var info = root.querySelector(".information-container");
    set(info, "role", "region");
    labelled(info, root.querySelector(".info .title"), "apidocs-title");
    var schemes = root.querySelector(".scheme-container");
    set(schemes, "role", "region");
    labelled(schemes, root.querySelector(".servers-title"), "apidocs-servers");
    labelled(root.querySelector("#servers"), root.querySelector(".servers-title"), "apidocs-servers");
    labelled(root.querySelector("section.models"), root.querySelector("section.models h4"), "apidocs-models");
    // In an expanded operation: a parameter's value list is named by the parameter, the
    // responses table (which Swagger makes an unnamed region) is a table again, and a
    // scrolling example can be reached by keyboard.
    root.querySelectorAll("tr[data-param-name] select").forEach(function (select) {
      set(select, "aria-label", select.closest("tr").dataset.paramName);
    });
    root.querySelectorAll("table.responses-table").forEach(function (table) {
      set(table, "role", "table");
    });
    root.querySelectorAll(".highlight-code > pre").forEach(function (pre) {
      set(pre, "tabindex", "0");
    });
  }
  new MutationObserver(mend).observe(root, { childList: true, subtree: true });

  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    domNode: root,
    // Deep links would put a link inside each operation's toggle button (nested-interactive).
    deepLinking: false,
    // The default validator badge would fetch validator.swagger.io: the docs stay offline.
    validatorUrl: null,
    tryItOutEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
})();
