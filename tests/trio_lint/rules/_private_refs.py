"""What a user-facing text must never cite: our research notes, their row and section numbers,
the research rule codes, file:line positions inside SDK wheels, issue numbers, our process."""

from __future__ import annotations

import re

PRIVATE = re.compile(
    r"api-diff|anchors\.md|pytrio-protocol\.md|(?<![\w-])tools\.md|/work/|research/"
    r"|\brows? \d|§|\bTRIO0\d\d\b|\bpitfalls? \d|\bAppendix [A-Z]\b"
    r"|\b0(?:1\d|2\d):[\w./-]+\.py"  # "029:client/rest.py", "013:lib/sampling_client.py"
    r"|\.py:\d+(?:-\d+|,\d+)"  # SDK source ranges such as "coordinator.py:172-175"
    r"|\b[Ii]ssue \d|requesters|people who asked|the lead\b|offline check"
)


def private_references(text: str) -> list[str]:
    return [match.group(0) for match in PRIVATE.finditer(text)]
