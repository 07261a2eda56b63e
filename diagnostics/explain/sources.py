"""Where a finding's rule is documented, in words a user can look up: ASA's public pages by
title and our docs/semantics.md by section title (never internal references)."""

from __future__ import annotations

RULES = 'docs/semantics.md, "The rules, as implemented"'
EVENT_ORDERING = 'ASA docs, "Configuring event ordering policies for Azure Stream Analytics"'
TIME_HANDLING = 'ASA docs, "Understand time handling in Azure Stream Analytics"'
EVENT_ORDER = 'ASA docs, "Azure Stream Analytics event order considerations"'
TIMESTAMP_BY = 'ASA docs, "TIMESTAMP BY (Azure Stream Analytics)", the OVER clause'
CTI = 'StreamInsight docs, "Advancing application time"'
