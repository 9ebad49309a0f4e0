"""The JSON result: the machine contract (schema ``spec/result.schema.json``)."""

from __future__ import annotations

import json
from typing import TextIO

from validator.model import Report


class JsonRenderer:
    def render(self, report: Report, stream: TextIO) -> None:
        json.dump(report.to_dict(), stream, indent=2, ensure_ascii=False, default=str)
        stream.write("\n")
