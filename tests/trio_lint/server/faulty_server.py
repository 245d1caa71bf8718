"""`trio-lint server` with two injected faults, run by test_faults.py as its own process: a
document containing ENGINE_FAULT makes trio-lint's engine raise (the server's own guard must turn
that into PTR903), and one containing RULE_FAULT makes the PTR202 rule raise (the engine reports
that rule as PTR903 and keeps the others). Nothing is patched unless this runs as a script."""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    import trio_lint.lint.linter as engine
    from tests.trio_lint.server.lsp_helpers import ENGINE_FAULT, RULE_FAULT
    from trio_lint.cli import main as trio_lint
    from trio_lint.rules.hf_lr import HfLr

    lint_document = engine.lint_document
    visit_call = HfLr.visit_Call

    def faulty_lint_document(path, data, *args, **kwargs):
        if ENGINE_FAULT.encode() in data:
            raise RuntimeError("injected engine fault")
        return lint_document(path, data, *args, **kwargs)

    def faulty_visit_call(self, node):
        if RULE_FAULT in self.ctx.source:
            raise ValueError("injected rule fault")
        return visit_call(self, node)

    engine.lint_document = faulty_lint_document
    HfLr.visit_Call = faulty_visit_call
    return trio_lint(["server"])


if __name__ == "__main__":
    sys.exit(main())
