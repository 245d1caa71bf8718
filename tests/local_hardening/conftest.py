"""trio-local hardening: data-dir portability, input bounds, faults and fuzzing."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
