// The job pickers of the job form (jobs.web.chains.JobPicker): a ticked search result
// moves into the chosen list, so that the next search does not take it away. Without
// JavaScript the chosen jobs can still be unticked.
"use strict";

document.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || box.type !== "checkbox" || !box.checked) {
    return;
  }
  const results = box.closest("[data-picker-results]");
  const picker = box.closest("[data-job-picker]");
  if (!results || !picker) {
    return;
  }
  picker.querySelector("[data-picker-chosen]").append(box.closest("li"));
});
