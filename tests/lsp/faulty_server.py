"""`trio-lint server` with two injected faults, started by test_faults.py as its own process:
a document containing ENGINE_FAULT makes trio-lint's engine raise (the server's own guard must
turn that into PTR903), and one containing RULE_FAULT makes the PTR202 rule raise (the engine
reports that rule as PTR903 and keeps the others)."""

from __future__ import annotations

import sys

import trio_lint.engine as engine
from trio_lint.cli import main
from trio_lint.rules.hf_lr import HfLr

ENGINE_FAULT = "inject-engine-fault"
RULE_FAULT = "inject-rule-fault"

_lint_document = engine.lint_document
_visit_call = HfLr.visit_Call


def faulty_lint_document(path, data, *args, **kwargs):
    if ENGINE_FAULT.encode() in data:
        raise RuntimeError("injected engine fault")
    return _lint_document(path, data, *args, **kwargs)


def faulty_visit_call(self, node):
    if RULE_FAULT in self.ctx.source:
        raise ValueError("injected rule fault")
    return _visit_call(self, node)


engine.lint_document = faulty_lint_document
HfLr.visit_Call = faulty_visit_call

if __name__ == "__main__":
    sys.exit(main(["server"]))
