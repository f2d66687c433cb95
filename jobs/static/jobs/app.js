// Behaviour shared by every page. No text here: everything a user reads is in templates.
"use strict";

// Tell the server the browser's time zone, so that it shows dates and times in it
// (jobs.middleware.TimezoneMiddleware validates the name). From the next request on.
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
})();

// Controls marked data-autosubmit (the active switches, the language menu) submit their
// form when changed. Delegated, so rows that htmx swaps in keep working.
document.addEventListener("change", (event) => {
  const control = event.target;
  if (control instanceof HTMLElement && control.hasAttribute("data-autosubmit") && control.form) {
    control.form.requestSubmit();
  }
});
