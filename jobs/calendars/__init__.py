"""Business calendars, blackout windows and jitter: pure planning of when occurrences run."""
