// The job form shows only the fields of the chosen schedule type. Hidden fields are
// disabled too, so they are not submitted. Without JavaScript every field stays visible.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const switcher = document.querySelector("[data-schedule-switch]");
  if (!switcher) {
    return;
  }
  const sections = document.querySelectorAll(".js-schedule[data-schedule]");
  function showChosen() {
    for (const section of sections) {
      const shown = section.dataset.schedule.split(" ").includes(switcher.value);
      section.hidden = !shown;
      for (const control of section.querySelectorAll("input, select, textarea")) {
        control.disabled = !shown;
      }
    }
  }
  switcher.addEventListener("change", showChosen);
  showChosen();
});
