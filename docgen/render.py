"""`python -m docgen.render [--check]`: render generated docs, or report which are stale.

Three kinds of output:
- whole files: `templates/files/<path>.j2` renders to `<repo>/<path>`;
- blocks inside hand-written Markdown: the text between `<!-- BEGIN GENERATED: name -->` and
  `<!-- END GENERATED: name -->` is replaced by `templates/blocks/<name>.md.j2`;
- `skills/pytrio/`, the installable copy of the skill's root files (docgen/skill_copy.py).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jinja2

from docgen import skill_copy
from docgen.sources import context
from localfs.atomic import write_atomic

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = Path(__file__).resolve().parent / "templates"
# Hand-written Markdown that may hold generated blocks.
BLOCK_HOSTS = ("SKILL.md", "README.md", "README.zh-CN.md", "references", "best-practices")
BLOCK = re.compile(
    r"(<!-- BEGIN GENERATED: (?P<name>[\w-]+) -->\n)"
    r"(?P<body>.*?)"
    r"(<!-- END GENERATED: (?P=name) -->)",
    re.S,
)


class UnknownBlockError(ValueError):
    """A marker names a block with no template."""


class FormatterError(RuntimeError):
    """ruff could not be run on a rendered document."""


def ruff_format_markdown(text: str, relative: str) -> str:
    """The text as `ruff format .` leaves it: ruff formats the Python blocks of Markdown too, so
    rendered docs must already be in that shape or `ruff format --check` fails on them."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        raise FormatterError("ruff is needed to format generated docs: pip install ruff")
    process = subprocess.run(
        [ruff, "format", "--stdin-filename", relative, "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,  # the project's [tool.ruff] settings, whatever root is being rendered
        check=False,
    )
    if process.returncode != 0:
        raise FormatterError(f"ruff format failed on {relative}: {process.stderr.strip()}")
    return process.stdout


def brief(text: str, limit: int = 150) -> str:
    """A checklist item: the rule's summary without "Flags", cut at a clause boundary if long."""
    text = re.sub(r"^(Flags|Reports|On 0\.2: flags|Inside `async def`, flags)\s+", "", text.strip())
    text = text[:1].upper() + text[1:]
    if len(text) <= limit:
        return text
    cuts = [
        m.start()
        for m in re.finditer(r"[,;:(]\s", text[:limit])
        if text[: m.start()].count("`") % 2 == 0
    ]
    if not cuts:  # no clause boundary: cut at a space outside inline code
        cuts = [
            m.start()
            for m in re.finditer(r" ", text[:limit])
            if text[: m.start()].count("`") % 2 == 0
        ]
    return (text[: cuts[-1]] if cuts else text[:limit]).rstrip(" ,;:(") + " …"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Markdown, not HTML
    )
    env.filters["cell"] = lambda text: str(text).replace("|", "\\|").replace("\n", " ")
    env.filters["code"] = lambda text: f"`{text}`"
    env.filters["brief"] = brief
    return env


def _hosts(root: Path) -> list[Path]:
    paths: list[Path] = []
    for name in BLOCK_HOSTS:
        path = root / name
        if path.is_dir():
            paths.extend(sorted(path.glob("*.md")))
        elif path.is_file():
            paths.append(path)
    return paths


def render_blocks(text: str, env: jinja2.Environment, ctx: dict[str, Any], where: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        try:
            template = env.get_template(f"blocks/{name}.md.j2")
        except jinja2.TemplateNotFound:
            raise UnknownBlockError(
                f"{where}: no template docgen/templates/blocks/{name}.md.j2"
            ) from None
        body = template.render(**ctx).strip("\n")
        return f"{match.group(1)}{body}\n{match.group(4)}"

    return BLOCK.sub(replace, text)


def render_all(root: Path = ROOT) -> dict[Path, str]:
    """Every generated file's expected content, rendered in memory."""
    env = environment()
    ctx = context()
    out: dict[Path, str] = {}
    for template in sorted((TEMPLATES / "files").rglob("*.j2")):
        relative = template.relative_to(TEMPLATES / "files").with_suffix("")
        text = env.get_template(f"files/{template.relative_to(TEMPLATES / 'files')}").render(**ctx)
        out[root / relative] = text.rstrip("\n") + "\n"
    for path in _hosts(root):
        text = out.get(path, path.read_text(encoding="utf-8") if path.exists() else "")
        rendered = render_blocks(text, env, ctx, str(path.relative_to(root)))
        if rendered != text or path in out:
            out[path] = rendered
    formatted = {
        path: ruff_format_markdown(text, str(path.relative_to(root))) for path, text in out.items()
    }
    # skills/pytrio/ copies the skill's root files as rendered now (docgen/skill_copy.py).
    formatted.update(skill_copy.expected_copy(root, formatted))
    return formatted


def stale(root: Path = ROOT) -> list[Path]:
    rendered = render_all(root)
    changed = [
        path
        for path, text in rendered.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    return changed + skill_copy.extra_files(root, rendered)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docgen.render", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated doc is stale")
    args = parser.parse_args(argv)
    if args.check:
        paths = stale()
        for path in paths:
            print(f"stale: {path.relative_to(ROOT)} (run `make docs`)")
        return 1 if paths else 0
    rendered = render_all()
    for path, text in rendered.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            write_atomic(path, text.encode("utf-8"), mode=0o644, parents=True)
            print(f"rendered {path.relative_to(ROOT)}")
    for path in skill_copy.extra_files(ROOT, rendered):
        path.unlink()
        print(f"removed {path.relative_to(ROOT)} (its original is gone)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
