"""pytrio_facts.extras reads an extra's requirements from the distribution's metadata."""

import importlib.metadata

import pytest

from pytrio_facts.extras import missing_requirements, require_extra

REQUIRES = [
    "libcst>=1.5",
    'pytrio<0.2.10,>=0.2.9; extra == "sdk"',
    'pytrio-skill[sdk]; extra == "mcp"',
    'mcp<3,>=2.3; extra == "mcp"',
    'a-package-nobody-installed==1.0; extra == "mcp"',
    'another_missing_one; python_version >= "3.11" and extra == "local"',
    'pytrio_skill[mcp,sdk]; extra == "all"',
]


def test_only_the_extras_missing_distributions_are_named() -> None:
    assert missing_requirements("mcp", REQUIRES) == ["a-package-nobody-installed"]
    assert missing_requirements("sdk", REQUIRES) == []  # pytrio is installed here
    assert missing_requirements("local", REQUIRES) == ["another_missing_one"]
    assert missing_requirements("all", REQUIRES) == ["a-package-nobody-installed"]  # nested
    assert missing_requirements("nope", REQUIRES) == []


def test_the_installed_distribution_has_every_extra_we_need() -> None:
    requires = importlib.metadata.requires("pytrio-skill") or []
    assert any('extra == "mcp"' in r for r in requires)
    assert any('extra == "local"' in r for r in requires)
    for extra in ("mcp", "local", "sdk"):  # this venv has them all
        assert missing_requirements(extra) == []


def test_require_extra_names_the_install_line(monkeypatch, capsys) -> None:
    monkeypatch.setattr(importlib.metadata, "requires", lambda name: REQUIRES)
    with pytest.raises(SystemExit) as stopped:
        require_extra("mcp", "trio-mcp")
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "pip install 'pytrio-skill[mcp]'" in err and "a-package-nobody-installed" in err
    require_extra("sdk", "trio-whatever")  # nothing missing: returns
