// granite view: pages that list trials update themselves while a run is
// writing. Every poll asks /api/state what the results folders hold; when
// that changed, the page is fetched again and its <main> swapped in, so
// new trials appear without a reload. No library, no build step.
(function () {
  "use strict";
  var main = document.querySelector("main[data-live]");
  if (!main) return;
  var every = parseInt(main.getAttribute("data-poll"), 10) || 2000;
  var badge = document.getElementById("live");
  function tick() {
    fetch("/api/state", { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        if (s.state === main.getAttribute("data-state")) return null;
        return fetch(location.href, { cache: "no-store", credentials: "same-origin" }).then(function (r) { return r.text(); });
      })
      .then(function (html) {
        if (!html) return;
        var next = new DOMParser().parseFromString(html, "text/html").querySelector("main[data-live]");
        if (!next) return;
        main.innerHTML = next.innerHTML;
        main.setAttribute("data-state", next.getAttribute("data-state"));
        if (badge) badge.setAttribute("data-updated", String(Date.now()));
      })
      .catch(function () { if (badge) badge.classList.add("offline"); })
      .then(function () { setTimeout(tick, every); });
  }
  setTimeout(tick, every);
})();
