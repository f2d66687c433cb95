// Behaviour shared by every page. No text here: everything a user reads is in templates.
"use strict";

// Tell the server the browser's time zone, so that it shows dates and times in it
// (jobs.web.middleware.zone_from_request validates the name). From the next request on:
// the live parts' next refresh, whose zone the listener below then names in the header.
// On a browser's first page (no cookie yet) drawn in another zone (the page's
// <meta name="time-zone">), the page is drawn again at once, in the browser's zone: only
// once, since the cookie is then set, and only if the browser keeps it.
(function rememberTimeZone() {
  let zone;
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch (error) {
    return;
  }
  if (!zone || !/^[A-Za-z0-9_+\-\/]{1,64}$/.test(zone)) {
    return;
  }
  const current = document.cookie.split("; ").find((item) => item.startsWith("tz="));
  if (current !== "tz=" + zone) {
    document.cookie = "tz=" + zone + "; path=/; max-age=31536000; samesite=lax";
  }
  const drawnIn = document.querySelector('meta[name="time-zone"]');
  const kept = document.cookie.split("; ").includes("tz=" + zone);
  if (current === undefined && kept && drawnIn && drawnIn.content !== zone) {
    window.location.reload();
  }
})();

// Every answer of the screens to htmx names the zone its times are in (X-Time-Zone,
// jobs.web.screens); elements marked data-zone-label (the header's "Time zone: …") are
// brought to it, so that on a first visit the label follows the times without a reload.
document.addEventListener("htmx:afterRequest", (event) => {
  const xhr = event.detail && event.detail.xhr;
  const label = xhr ? xhr.getResponseHeader("X-Time-Zone") : null;
  if (!label || !event.detail.successful) {
    return;
  }
  for (const element of document.querySelectorAll("[data-zone-label]")) {
    const shown = element.getAttribute("data-zone-label");
    if (shown !== label && element.textContent.includes(shown)) {
      element.textContent = element.textContent.replace(shown, label);
      element.setAttribute("data-zone-label", label);
    }
  }
});

// Controls marked data-autosubmit (the active switches, the language menu) submit their
// form when changed. Delegated, so rows that htmx swaps in keep working.
document.addEventListener("change", (event) => {
  const control = event.target;
  if (control instanceof HTMLElement && control.hasAttribute("data-autosubmit") && control.form) {
    control.form.requestSubmit();
  }
});

// The live parts (hx-trigger="jobs:poll") refresh every data-poll-ms while the tab is
// visible, and at once when it becomes visible again; not while an element matching
// their data-poll-unless is on the page (a ticked row of the job list, which a refresh
// would untick). Here rather than as hx-trigger filters ("every 3s [...]"), which htmx
// runs through eval: the Content-Security-Policy allows no eval (htmx-config allowEval).
(function livePolls() {
  function poll(element) {
    const unless = element.getAttribute("data-poll-unless");
    if (
      window.htmx &&
      document.visibilityState === "visible" &&
      !(unless && document.querySelector(unless))
    ) {
      window.htmx.trigger(element, "jobs:poll");
    }
  }
  function start(root) {
    if (!(root instanceof Element)) {
      return;
    }
    const elements = [...root.querySelectorAll("[data-poll-ms]")];
    if (root.matches("[data-poll-ms]")) {
      elements.push(root);
    }
    for (const element of elements) {
      if (element.jobsPollTimer) {
        continue;
      }
      const ms = Math.max(200, Number(element.getAttribute("data-poll-ms")) || 3000);
      // An element swapped out of the page stops its own timer.
      element.jobsPollTimer = window.setInterval(() => {
        if (element.isConnected) {
          poll(element);
        } else {
          window.clearInterval(element.jobsPollTimer);
        }
      }, ms);
    }
  }
  document.addEventListener("htmx:load", (event) => start(event.target));
  start(document.body);
  document.addEventListener("visibilitychange", () => {
    for (const element of document.querySelectorAll("[data-poll-ms]")) {
      poll(element);
    }
  });
})();

// Grids whose columns the server computes (the Upcoming page's density strips: each
// bucket as wide as the time it covers) name them in data-grid-columns; set here through
// the DOM, since the Content-Security-Policy refuses style="" attributes.
(function gridColumns() {
  function apply(root) {
    if (!(root instanceof Element)) {
      return;
    }
    const grids = [...root.querySelectorAll("[data-grid-columns]")];
    if (root.matches("[data-grid-columns]")) {
      grids.push(root);
    }
    for (const grid of grids) {
      grid.style.gridTemplateColumns = grid.getAttribute("data-grid-columns");
    }
  }
  document.addEventListener("htmx:load", (event) => apply(event.target));
  apply(document.body);
})();
