"""Render the generated parts of the skill's docs (`make docs`) from pytrio_facts and registries."""
