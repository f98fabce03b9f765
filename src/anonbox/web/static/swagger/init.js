// Start Swagger UI on anonbox's own OpenAPI document. A file rather than an inline
// script, so the page keeps the strict Content Security Policy (script-src 'self').
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    domNode: root,
    deepLinking: true,
    // The default validator badge would fetch validator.swagger.io: the docs stay offline.
    validatorUrl: null,
    tryItOutEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
})();
