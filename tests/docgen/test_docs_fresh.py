"""Generated docs must equal what `make docs` renders now from the facts and the registries.

When trio-lint gains a rule or trio-mcp a tool, this test fails until `make docs` is re-run.
"""

import jinja2
import pytest

from docgen import render


def test_every_generated_doc_is_fresh() -> None:
    stale = [str(path.relative_to(render.ROOT)) for path in render.stale()]
    assert not stale, f"stale generated docs {stale}: run `make docs`"


def test_blocks_are_replaced_between_their_markers_only() -> None:
    env = jinja2.Environment(loader=jinja2.DictLoader({"blocks/x.md.j2": "new {{ n }}\n"}))
    text = "keep\n<!-- BEGIN GENERATED: x -->\nold\n<!-- END GENERATED: x -->\nkeep too\n"
    out = render.render_blocks(text, env, {"n": 1}, "doc.md")
    assert out == "keep\n<!-- BEGIN GENERATED: x -->\nnew 1\n<!-- END GENERATED: x -->\nkeep too\n"


def test_unknown_block_names_the_file_and_template() -> None:
    env = jinja2.Environment(loader=jinja2.DictLoader({}))
    text = "<!-- BEGIN GENERATED: nope -->\n<!-- END GENERATED: nope -->\n"
    with pytest.raises(render.UnknownBlockError, match=r"doc\.md: .*blocks/nope\.md\.j2"):
        render.render_blocks(text, env, {}, "doc.md")


def test_stale_detects_an_edited_generated_file(tmp_path, monkeypatch) -> None:
    rendered = render.render_all()
    lint_rules = render.ROOT / "references" / "lint-rules.md"
    target = tmp_path / "references" / "lint-rules.md"
    target.parent.mkdir()
    target.write_text(rendered[lint_rules] + "hand edit\n")
    monkeypatch.setattr(render, "BLOCK_HOSTS", ())
    assert target in render.stale(tmp_path)


def test_brief_drops_the_verb_and_never_cuts_inside_inline_code() -> None:
    assert render.brief("Flags `lr=` passed to `AdamParams`.") == "`lr=` passed to `AdamParams`."
    long = "Flags a call " + "`a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p` " * 4 + "end"
    cut = render.brief(long, limit=80)
    assert cut.endswith(" …") and cut[:-2].count("`") % 2 == 0


def test_rendered_markdown_is_already_in_ruff_format() -> None:
    # ruff formats the python blocks of Markdown, so `ruff format --check .` sees generated docs too
    unformatted = (
        "# t\n\n```python\nimport pytrio as trio\nx = trio.AdamParams( learning_rate=1e-4 )\n```\n"
    )
    formatted = render.ruff_format_markdown(unformatted, "references/x.md")
    assert "trio.AdamParams(learning_rate=1e-4)" in formatted
    assert render.ruff_format_markdown(formatted, "references/x.md") == formatted
