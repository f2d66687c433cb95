"""The time zone list of the job forms, written out without a template per option."""

from __future__ import annotations

from jobs import schedules
from jobs.web.widgets import TimeZoneSelect


def test_it_lists_the_site_zone_then_every_zone_and_marks_the_chosen_one():
    html = TimeZoneSelect().render("timezone", "Asia/Tokyo", attrs={"id": "id_timezone"})
    assert html.startswith('<select id="id_timezone" name="timezone">')
    assert html.count("<option") == len(schedules.time_zone_names()) + 1
    assert html.index('<option value="">') < html.index('value="Africa/Abidjan"')
    assert '<option value="Asia/Tokyo" selected>Asia/Tokyo</option>' in html
    assert html.count(" selected") == 1


def test_a_blank_value_selects_the_site_zone_and_attributes_are_escaped():
    html = TimeZoneSelect().render("timezone", None, attrs={"class": 'form-select "x"'})
    assert 'class="form-select &quot;x&quot;"' in html
    assert '<option value="" selected>' in html
    html = TimeZoneSelect().render("timezone", "", attrs={})
    assert '<option value="" selected>' in html
    assert html.count(" selected") == 1
