"""Suite-wide settings.

Under pytest-xdist each worker is one of the machine's cores: torch in a worker (and in the
trio-local processes it starts) uses one thread, so two workers on two cores do not fight over
four threads. Set before any test module imports torch."""

from __future__ import annotations

import os

if os.environ.get("PYTEST_XDIST_WORKER"):
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
