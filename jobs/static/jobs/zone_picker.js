// The time zone select of the job forms (jobs.web.widgets.TimeZoneSelect): the text box
// above it, shown only with JavaScript, keeps the options whose name holds what is typed
// ("tok", "new york", "america/"), so that 600 names are a few. The select is still what
// is posted; the server checks the zone as ever. Delegated: forms htmx swaps in work too.
"use strict";

(function zonePickers() {
  function normalised(text) {
    return text.trim().toLowerCase().replace(/\s+/g, "_");
  }

  function filter(box) {
    const select = document.getElementById(box.getAttribute("data-zone-filter"));
    if (!select) {
      return;
    }
    const wanted = normalised(box.value);
    for (const option of select.options) {
      // The blank "site's zone" and the chosen one always stay.
      const keep =
        !wanted || option.value === "" || option.selected || normalised(option.text).includes(wanted);
      option.hidden = !keep;
    }
  }

  function showBoxes(root) {
    for (const box of root.querySelectorAll("[data-zone-filter][hidden]")) {
      box.hidden = false;
    }
  }

  document.addEventListener("input", (event) => {
    const box = event.target;
    if (box instanceof HTMLInputElement && box.hasAttribute("data-zone-filter")) {
      filter(box);
    }
  });
  // Enter in the box must not submit the whole job form.
  document.addEventListener("keydown", (event) => {
    const box = event.target;
    if (event.key === "Enter" && box instanceof HTMLInputElement && box.hasAttribute("data-zone-filter")) {
      event.preventDefault();
    }
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => showBoxes(document));
  } else {
    showBoxes(document);
  }
  document.addEventListener("htmx:load", (event) => showBoxes(event.target));
})();
