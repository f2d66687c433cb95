"""Japanese: the year first with slashes, to the second, with the zone
("2026/12/01 08:30:05 JST")."""

DATETIME_FORMAT = "Y/m/d H:i:s T"
SHORT_DATETIME_FORMAT = "Y/m/d H:i:s T"
DATE_FORMAT = "Y/m/d"
SHORT_DATE_FORMAT = "Y/m/d"
TIME_FORMAT = "H:i:s"
