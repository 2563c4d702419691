"""The versioned JSON report (schema dflash-doctor/report@1)."""

from __future__ import annotations

import json


def render_json(report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
