"""English: ISO 8601's order, to the second, with the zone ("2026-12-01 08:30:05 JST").
Runs are seconds apart, which Django's default ("Dec. 1, 2026, 8:30 a.m.") hides."""

DATETIME_FORMAT = "Y-m-d H:i:s T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i:s T"
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
TIME_FORMAT = "H:i:s"
