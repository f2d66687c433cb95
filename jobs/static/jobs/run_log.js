// A run's page while the run runs: htmx replaces its live part (#run-live) at every
// poll. Keep the reader's place in the log: following the end if they were at the end,
// where they were otherwise. A page opened while the run runs starts at the log's end,
// its newest line: what one opens a running run's page to see.
"use strict";

(function startAtTheEnd() {
  const log = document.getElementById("run-log");
  if (log && document.getElementById("log-live")) {
    log.scrollTop = log.scrollHeight;
  }
})();

(function keepLogPosition() {
  let kept = null;
  document.addEventListener("htmx:beforeSwap", (event) => {
    const log = document.getElementById("run-log");
    if (!log || event.detail.target?.id !== "run-live") {
      return;
    }
    const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 4;
    kept = { atEnd, top: log.scrollTop };
  });
  document.addEventListener("htmx:afterSettle", () => {
    const log = document.getElementById("run-log");
    if (!log || kept === null) {
      return;
    }
    log.scrollTop = kept.atEnd ? log.scrollHeight : kept.top;
    kept = null;
  });
})();
