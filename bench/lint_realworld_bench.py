"""trio-lint precision on real PyTRIO code that other people wrote.

    .venv/bin/python bench/lint_realworld_bench.py [--show-unjudged] [--corpus NAME ...]

Corpora (cached under bench/out/realworld/corpus/, never committed):
- `pytrio-cookbook`: the pytrio-cookbook 0.1.0 wheel from PyPI, downloaded with
  `pip download --no-deps --python-version 3.12 --only-binary=:all: pytrio-cookbook==0.1.0`.
- `tinker-cookbook`: the tinker-cookbook 0.6.1 sdist from PyPI (Tinker code, linted with
  `sdk-modules = ["tinker"]`), downloaded with
  `pip download --no-deps --no-binary :all: tinker-cookbook==0.6.1`; its findings are judged
  against the tinker 0.38.0 wheel (read with ast/grep, never imported): none may rest on a fact
  that only holds for PyTRIO.
- `github`: public scripts that `import pytrio as trio`, found with a code-search index; each is
  listed in the judgement file with its repository, path and commit (or the index's file id where
  the index does not name the repository) and the sha256 of its content. The bench never fetches
  them (only package registries are reachable here): files that are not cached are reported as
  missing, and a file whose content differs is skipped.
- `markdown`: the Markdown documents of the public PyTRIO skill repository
  (github.com/SwanHubX/pytrio-skill, its `main` and `archive` branches), listed with their commit
  and sha256 under `markdown_files` and cached under bench/out/realworld/corpus/markdown/ like the
  github files; their ```python blocks are checked in context (later blocks see what earlier ones
  bound). Precision is reported for them on their own (target >= 0.95).

Every finding of the default rules is looked up in bench/lint_realworld_judgements.json by
(corpus, file, code, the stripped source line): each judgement says true or false with a
one-line reason checked against the SDK source. The bench prints findings and precision per rule
and per corpus. Targets: overall precision >= 0.97 on Python, no rule below 0.8 with 3 or more
findings, no PTR9xx finding on a real file, zero findings on pytrio-cookbook, and precision
>= 0.95 on tinker-cookbook and on the Markdown documents.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "realworld"
CORPUS = OUT / "corpus"
JUDGEMENTS = ROOT / "bench" / "lint_realworld_judgements.json"
TRIO_LINT = str(Path(sys.executable).parent / "trio-lint")
COOKBOOK = "pytrio-cookbook==0.1.0"
TINKER_COOKBOOK = "tinker-cookbook==0.6.1"
# The walk must see the cache (bench/out/ is git-ignored); everything else is the default.
CONFIG = "[tool.trio-lint]\nrespect-gitignore = false\n"
# Tinker code: its modules import `tinker`, which trio-lint reads as an SDK module.
TINKER_CONFIG = CONFIG + 'sdk-modules = ["tinker"]\n'
TARGET_OVERALL, TARGET_RULE, RULE_MIN_FINDINGS = 0.97, 0.8, 3
TARGET_TINKER = 0.95
TARGET_MARKDOWN = 0.95
# Markdown: a directory walk lints Markdown only when told to.
MARKDOWN_CONFIG = CONFIG + "markdown = true\n"
CORPORA = ("pytrio-cookbook", "tinker-cookbook", "github", "markdown")


def _download(directory: Path, pattern: str, *args: str) -> Path:
    """`pip download --no-deps ARGS -d directory`; the file it leaves there named `pattern`."""
    directory.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", *args, "-d", str(directory)]
    subprocess.run([*command, "-q"], check=True)
    (found,) = directory.glob(pattern)
    return found


def fetch_cookbook() -> Path:
    """The cookbook's files, unpacked from its wheel (downloaded once with pip)."""
    target = CORPUS / "pytrio-cookbook"
    if not (target / "trio_cookbook").is_dir():
        wheel = _download(
            OUT / "wheels",
            "pytrio_cookbook-0.1.0-*.whl",
            *("--python-version", "3.12", "--only-binary=:all:", COOKBOOK),
        )
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(target)
    return target


def fetch_tinker_cookbook() -> Path:
    """tinker-cookbook's files, unpacked from its sdist (downloaded once with pip)."""
    target = CORPUS / "tinker-cookbook"
    if not (target / "tinker_cookbook").is_dir():
        sdist = _download(
            OUT / "sdists", "tinker_cookbook-0.6.1.tar.gz", "--no-binary", ":all:", TINKER_COOKBOOK
        )
        unpacked = OUT / "unpacked"
        with tarfile.open(sdist) as archive:
            archive.extractall(unpacked, filter="data")
        (unpacked / sdist.name.removesuffix(".tar.gz")).rename(target)
    return target


def check_github(files: list[dict], corpus: str = "github") -> tuple[list[str], list[str]]:
    """(missing, changed) github corpus files: the bench cannot fetch them, only verify them."""
    missing, changed = [], []
    for entry in files:
        path = CORPUS / corpus / entry["file"]
        if not path.is_file():
            missing.append(entry["file"])
        elif hashlib.sha256(path.read_bytes()).hexdigest()[:16] != entry["sha256"]:
            changed.append(entry["file"])
    return missing, changed


def lint(directory: Path, skip: set[str], text: str = CONFIG) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "trio-lint.toml"
        config.write_text(text)
        proc = subprocess.run(
            [
                TRIO_LINT,
                "--config",
                str(config),
                "--no-cache",
                "--output-format",
                "json",
                directory,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"trio-lint failed ({proc.returncode}): {proc.stderr.strip()}")
    found = []
    for item in json.loads(proc.stdout or "[]"):
        relative = Path(item["filename"]).resolve().relative_to(directory.resolve()).as_posix()
        if relative in skip:
            continue
        lines = Path(item["filename"]).read_text(encoding="utf-8").splitlines()
        row = item["location"]["row"]
        source = lines[row - 1].strip() if 0 < row <= len(lines) else ""
        found.append(
            {"file": relative, "line": row, "code": item["code"], "source": source}
            | {"message": item["message"]}
        )
    return found


def lines_of(directory: Path) -> tuple[int, int]:
    files = [p for p in directory.rglob("*.py") if p.is_file()]
    if not files:  # the Markdown corpus
        files = [p for p in directory.rglob("*.md") if p.is_file()]
    return len(files), sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show-unjudged", action="store_true", help="print unjudged findings")
    parser.add_argument(
        "--corpus",
        action="append",
        choices=CORPORA,
        help="lint only this corpus (repeatable; default: all of them)",
    )
    args = parser.parse_args()
    wanted = set(args.corpus or CORPORA)
    data = json.loads(JUDGEMENTS.read_text(encoding="utf-8"))
    verdicts = {(j["corpus"], j["file"], j["code"], j["source"]): j for j in data["judgements"]}

    missing, changed = check_github(data["github_files"]) if "github" in wanted else ([], [])
    md_missing, md_changed = (
        check_github(data.get("markdown_files", []), "markdown")
        if "markdown" in wanted
        else ([], [])
    )
    corpora = {
        "pytrio-cookbook": (CORPUS / "pytrio-cookbook", set(), CONFIG),
        "tinker-cookbook": (CORPUS / "tinker-cookbook", set(), TINKER_CONFIG),
        "github": (CORPUS / "github", set(changed), CONFIG),
        "markdown": (CORPUS / "markdown", set(md_changed), MARKDOWN_CONFIG),
    }
    # The two registry corpora are downloaded once; the other two are only ever read from cache.
    if "pytrio-cookbook" in wanted:
        fetch_cookbook()
    if "tinker-cookbook" in wanted:
        fetch_tinker_cookbook()
    corpora = {name: corpus for name, corpus in corpora.items() if name in wanted}

    per_rule: dict[str, Counter] = defaultdict(Counter)
    per_corpus: dict[str, Counter] = defaultdict(Counter)
    unjudged: list[tuple[str, dict]] = []
    engine_findings = 0
    for name, (directory, skip, config) in corpora.items():
        if not directory.is_dir():
            continue
        files, lines = lines_of(directory)
        per_corpus[name].update(files=files, lines=lines)
        for finding in lint(directory, skip, config):
            per_corpus[name]["findings"] += 1
            engine_findings += finding["code"].startswith("PTR9")
            verdict = verdicts.get((name, finding["file"], finding["code"], finding["source"]))
            if verdict is None:
                unjudged.append((name, finding))
                per_rule[("md:" if name == "markdown" else "") + finding["code"]]["unjudged"] += 1
                continue
            key = "true" if verdict["verdict"] else "false"
            per_rule[("md:" if name == "markdown" else "") + finding["code"]][key] += 1
            per_corpus[name][key] += 1

    print("corpus            files   lines  findings  true  false")
    for name, counts in per_corpus.items():
        print(
            f"{name:<16} {counts['files']:>6} {counts['lines']:>7} {counts['findings']:>9}"
            f" {counts['true']:>5} {counts['false']:>6}"
        )
    for kind, (gone, differ) in {
        "github_files": (missing, changed),
        "markdown_files": (md_missing, md_changed),
    }.items():
        if gone or differ:
            print(f"{kind} not cached: {len(gone)}; changed (skipped): {len(differ)}")
            for path in gone + differ:
                entry = next(e for e in data[kind] if e["file"] == path)
                print(f"  {path}: {entry['source']}")

    print("\nrule     findings  true  false  unjudged  precision")
    true_total = false_total = 0
    below = []
    for code in sorted(per_rule):
        counts = per_rule[code]
        if code.startswith("md:"):
            continue
        judged = counts["true"] + counts["false"]
        precision = counts["true"] / judged if judged else float("nan")
        true_total += counts["true"]
        false_total += counts["false"]
        if judged >= RULE_MIN_FINDINGS and precision < TARGET_RULE:
            below.append(code)
        print(
            f"{code:<8} {judged + counts['unjudged']:>8} {counts['true']:>5} {counts['false']:>6}"
            f" {counts['unjudged']:>9}  {precision:>9.2f}"
        )
    judged = true_total + false_total
    overall = true_total / judged if judged else 1.0
    cookbook_findings = per_corpus["pytrio-cookbook"]["findings"]
    tinker = per_corpus["tinker-cookbook"]
    tinker_judged = tinker["true"] + tinker["false"]
    tinker_precision = tinker["true"] / tinker_judged if tinker_judged else 1.0
    print(
        f"\noverall precision {overall:.2f} ({true_total}/{judged}; target >= {TARGET_OVERALL})"
        f" · rules below {TARGET_RULE} with >= {RULE_MIN_FINDINGS} findings: {below or 'none'}"
        f" · PTR9xx findings: {engine_findings} · pytrio-cookbook findings: {cookbook_findings}"
        f" · unjudged: {len(unjudged)}"
    )
    print(
        f"tinker-cookbook precision {tinker_precision:.2f} ({tinker['true']}/{tinker_judged};"
        f" target >= {TARGET_TINKER})"
    )
    markdown = per_corpus["markdown"]
    md_judged = markdown["true"] + markdown["false"]
    md_precision = markdown["true"] / md_judged if md_judged else 1.0
    md_rules = ", ".join(
        f"{code[3:]} {counts['true']}/{counts['true'] + counts['false']}"
        for code, counts in sorted(per_rule.items())
        if code.startswith("md:")
    )
    print(
        f"markdown precision {md_precision:.2f} ({markdown['true']}/{md_judged};"
        f" target >= {TARGET_MARKDOWN}) · per rule (true/judged): {md_rules or 'none'}"
    )
    for name, finding in unjudged if args.show_unjudged else ():
        print(f"  UNJUDGED {name} {finding['file']}:{finding['line']} {finding['code']}")
        print(f"           {finding['source']}")
        print(f"           {finding['message']}")
    ok = (
        overall >= TARGET_OVERALL
        and not below
        and engine_findings == 0
        and cookbook_findings == 0
        and tinker_precision >= TARGET_TINKER
        and md_precision >= TARGET_MARKDOWN
        and not unjudged
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
