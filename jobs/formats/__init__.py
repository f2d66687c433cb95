"""How the app writes dates and times, per language: one format each, to the second and
with the zone's abbreviation. The screens read them through jobs.times; the admin
through Django's FORMAT_MODULE_PATH = ["jobs.formats"] (the standalone site sets
it), so both write a moment the same way."""
