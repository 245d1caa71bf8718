"""The route x rule table of trio-lint's reach: for every rule and every route of
`trio_lint.rules.base.REACH_ROUTES`, whether the variants of the rule's documented examples
along that route keep INVALID flagged and VALID quiet (`tests/trio_lint/rules/reach.py` makes them).

    python bench/lint_reach_table.py [--misses CODE] [--markdown]

Cells: `ok` (every variant behaved; the number of variants), `LIM` (a declared limitation),
`n/a` (declared not applicable), `-` (no variant: the route does not fit the examples),
`MISS`/`FALSE` (an undeclared miss or false finding: the test fails on it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.trio_lint.rules.reach import check_route, routes
from trio_lint.rules import all_rules


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", metavar="CODE", help="print the failing variants of a rule")
    parser.add_argument("--route", help="only this route")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    chosen = [r for r in all_rules() if not r.code.startswith("PTR9")]
    if args.misses:
        chosen = [r for r in chosen if r.code == args.misses]
    names = [r for r in routes() if not args.route or r == args.route]
    rows = []
    total = 0
    for rule in chosen:
        cells = []
        for route in names:
            outcome = check_route(rule, route)
            total += outcome.tried
            bad = len(outcome.misses) + len(outcome.false)
            if route in rule.reach.not_applicable:
                cell = "n/a"
            elif route in rule.reach.limitations:
                cell = "LIM" if bad else "LIM?"
            elif not outcome.tried:
                cell = "-"
            elif outcome.misses:
                cell = f"MISS{len(outcome.misses)}"
            elif outcome.false:
                cell = f"FALSE{len(outcome.false)}"
            else:
                cell = f"ok{outcome.tried}"
            cells.append(cell)
            if args.misses and bad:
                for v in outcome.misses:
                    print(f"--- MISS {route} ({v.what})\n{v.code}")
                for v in outcome.false:
                    print(f"--- FALSE {route} ({v.what})\n{v.code}")
        rows.append((f"{rule.code} {rule.name}", cells))
    width = max(len(r[0]) for r in rows)
    if args.markdown:
        print("| rule | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for label, cells in rows:
            print(f"| {label} | " + " | ".join(cells) + " |")
    else:
        short = [n[:9] for n in names]
        print(" " * width + " " + " ".join(f"{s:>9}" for s in short))
        for label, cells in rows:
            print(f"{label:<{width}} " + " ".join(f"{c:>9}" for c in cells))
    print(f"\n{total} variants in {time.perf_counter() - start:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
