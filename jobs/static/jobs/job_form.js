// The job forms (the dashboard's and the admin's) show only the fields of the chosen
// schedule type and of the chosen executor. Hidden fields are disabled too, so they are
// not submitted: a job moved to a cron schedule keeps no stale interval, a job moved to
// a Python task no stale headers. Without JavaScript every field stays visible. The
// fields a job's code owns are never enabled.
// No text here: the labels the command field takes are in its data-label-* attributes.
"use strict";

// One switch (a select) and the parts of the form that belong to some of its values.
// The dashboard's form wraps fields in sections naming their values (`sectionClass`
// with data-<sectionData>); in the admin each field's own box (or row) is shown or
// hidden, as its widget says (data-<controlData>, set by jobs.web.widgets).
function followSwitch(switcher, sectionClass, sectionData, controlData, onChange) {
  const parts = [];
  for (const section of document.querySelectorAll(`.${sectionClass}[data-${sectionData}]`)) {
    parts.push({ element: section, values: section.getAttribute(`data-${sectionData}`).split(" ") });
  }
  for (const control of document.querySelectorAll(`[data-${controlData}]`)) {
    const box = control.closest(`.${sectionClass}`) ? null : control.closest(".fieldBox, .form-row");
    if (box) {
      parts.push({ element: box, values: control.getAttribute(`data-${controlData}`).split(" ") });
    }
  }
  // Admin rows holding several fields side by side (every / unit): hidden when all are.
  const sharedRows = [...document.querySelectorAll(".form-row")].filter(
    (row) => row.querySelector(`.fieldBox [data-${controlData}]`),
  );

  function showChosen() {
    for (const part of parts) {
      const shown = part.values.includes(switcher.value);
      part.element.hidden = !shown;
      // An explicit display, because a stylesheet may give the element one of its own.
      part.element.style.display = shown ? "" : "none";
      for (const control of part.element.querySelectorAll("input, select, textarea, button")) {
        // A field the job's code owns stays disabled (jobs/web/code_fields.py).
        control.disabled = !shown || control.hasAttribute("data-code-owned");
      }
    }
    for (const row of sharedRows) {
      const allHidden = [...row.querySelectorAll(".fieldBox")].every((box) => box.hidden);
      row.style.display = allHidden ? "none" : "";
    }
    if (onChange) {
      onChange(switcher.value);
    }
  }
  switcher.addEventListener("change", showChosen);
  showChosen();
}

// The command field's label and help say what it holds for the chosen executor.
function describeCommand(executor) {
  const command = document.querySelector("[data-executor-switch]")?.form?.querySelector(
    "[name=command]",
  );
  if (command) {
    const label = document.querySelector(`label[for="${command.id}"]`);
    const text = command.getAttribute(`data-label-${executor}`);
    if (label && text) {
      // Keep the required-field asterisk crispy-forms adds, if any.
      const mark = label.querySelector(".asteriskField");
      label.textContent = text;
      if (mark) {
        label.append(" ", mark);
      }
    }
  }
  for (const help of document.querySelectorAll("[data-executor-help]")) {
    help.hidden = help.dataset.executorHelp !== executor;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const schedule = document.querySelector("[data-schedule-switch]");
  if (schedule) {
    followSwitch(schedule, "js-schedule", "schedule", "schedule-types");
  }
  const executor = document.querySelector("[data-executor-switch]");
  if (executor) {
    followSwitch(executor, "js-executor", "executor", "executor-kinds", describeCommand);
  }

  // The dashboard's form previews the schedule's next runs (jobs/_schedule_preview.html):
  // each change of a schedule field asks for it again, and htmx waits until typing
  // pauses (hx-trigger "schedule-changed delay:...") so that one request goes per pause.
  // This listener is on the form, so it runs after the switches have enabled the fields.
  const preview = document.getElementById("schedule-preview");
  const form = schedule?.form;
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
