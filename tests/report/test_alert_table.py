"""The demo report's alerts table speaks words, not the alert's field names."""

from __future__ import annotations

from diagnostics.report.render import _table, alert_rows


def test_alert_rows_have_headers_in_words():
    alert = {
        "severity": "critical",
        "title": "Late events",
        "state": "firing",
        "starts_at": "2024-01-01T00:05:00+00:00",
        "labels": {"job": "x"},
    }
    rows = alert_rows([alert])
    assert rows == [
        {
            "severity": "critical",
            "alert": "Late events",
            "state": "firing",
            "firing since": "2024-01-01T00:05:00+00:00",
        }
    ]
    html = _table(rows)
    assert "<th>firing since</th>" in html
    assert "starts_at" not in html
