"""Schedule arithmetic and its words: pure code over times, zones and cron
expressions (no database, no settings). `arithmetic` is the base; `words`, `daylight`
and `density` read it.
"""
