"""Packaging that pyproject.toml alone cannot say: the wheel ships the skill's files.

trio-mcp serves the skill's docs as `skill://` resources. In a checkout they are the root files;
a wheel has no repository root, so `skills/pytrio/` (the installable copy `make docs` renders
from the root files) is shipped as the package data folder `mcp_server/skill/`.
"""

from setuptools import find_packages, setup

SKILL = "mcp_server.skill"
# Folders of the skill that Python sees as packages are listed as such (examples' .py files ship
# as their modules); best-practices/ is not a package name, so it ships as data of SKILL.
SKILL_PACKAGES = [SKILL, f"{SKILL}.references", f"{SKILL}.examples"]

setup(
    packages=[
        *find_packages(
            include=["trio_lint*", "mcp_server*", "trio_local*", "pytrio_facts*", "localfs*"]
        ),
        *SKILL_PACKAGES,
    ],
    package_dir={SKILL: "skills/pytrio"},
    package_data={
        SKILL: ["SKILL.md", "best-practices/*.md"],
        f"{SKILL}.references": ["*.md"],
        "pytrio_facts": ["*.json"],  # the API of every pytrio release (generate_api.py)
    },
)
