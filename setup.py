"""Packaging that pyproject.toml alone cannot say: the wheel ships the skill's files.

trio-mcp serves the skill's docs as `skill://` resources. In a checkout they are the root files;
a wheel has no repository root, so `skills/pytrio/` (the installable copy `make docs` renders
from the root files) is shipped as the package data folder `mcp_server/skill/`.
"""

from setuptools import find_packages, setup

SKILL_PACKAGE = "mcp_server.skill"

setup(
    packages=[
        *find_packages(include=["trio_lint*", "mcp_server*", "trio_local*", "pytrio_facts*"]),
        SKILL_PACKAGE,
    ],
    package_dir={SKILL_PACKAGE: "skills/pytrio"},
    package_data={
        SKILL_PACKAGE: ["SKILL.md", "references/*.md", "best-practices/*.md", "examples/*.py"]
    },
)
