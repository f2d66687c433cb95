// The job forms (the dashboard's and the admin's) show only the fields of the chosen
// schedule type. Hidden fields are disabled too, so they are not submitted: a job moved
// to a cron schedule keeps no stale interval. Without JavaScript every field stays visible.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const switcher = document.querySelector("[data-schedule-switch]");
  if (!switcher) {
    return;
  }
  // The dashboard's form wraps fields in sections that name their schedule types. In the
  // admin each field's own box (or row) is shown or hidden, as its widget says
  // (data-schedule-types, set by jobs.forms.mark_schedule_switch).
  const parts = [];
  for (const section of document.querySelectorAll(".js-schedule[data-schedule]")) {
    parts.push({ element: section, types: section.dataset.schedule.split(" ") });
  }
  for (const control of document.querySelectorAll("[data-schedule-types]")) {
    const box = control.closest(".js-schedule") ? null : control.closest(".fieldBox, .form-row");
    if (box) {
      parts.push({ element: box, types: control.dataset.scheduleTypes.split(" ") });
    }
  }
  // Admin rows holding several fields side by side (every / unit): hidden when all are.
  const sharedRows = [...document.querySelectorAll(".form-row")].filter(
    (row) => row.querySelector(".fieldBox [data-schedule-types]"),
  );

  function showChosen() {
    for (const part of parts) {
      const shown = part.types.includes(switcher.value);
      part.element.hidden = !shown;
      // An explicit display, because a stylesheet may give the element one of its own.
      part.element.style.display = shown ? "" : "none";
      for (const control of part.element.querySelectorAll("input, select, textarea")) {
        control.disabled = !shown;
      }
    }
    for (const row of sharedRows) {
      const allHidden = [...row.querySelectorAll(".fieldBox")].every((box) => box.hidden);
      row.style.display = allHidden ? "none" : "";
    }
  }
  switcher.addEventListener("change", showChosen);
  showChosen();

  // The dashboard's form previews the schedule's next runs (jobs/_schedule_preview.html):
  // each change of a schedule field asks for it again, and htmx waits until typing
  // pauses (hx-trigger "schedule-changed delay:...") so that one request goes per pause.
  // This listener is on the form, so it runs after showChosen has enabled the fields.
  const preview = document.getElementById("schedule-preview");
  const form = switcher.form;
  if (preview && form) {
    const changed = (event) => {
      if (event.target instanceof HTMLElement && event.target.hasAttribute("data-preview-field")) {
        preview.dispatchEvent(new Event("schedule-changed"));
      }
    };
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
  }
});
