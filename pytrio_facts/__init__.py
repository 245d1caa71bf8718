"""Typed facts about the pytrio SDK (0.2.9), shared by the skill docs, trio-lint and trio-mcp.

Pure data: importing this package never imports pytrio. tests/pytrio_facts/test_facts.py checks
every fact against the installed SDK. Other products may APPEND facts in a marked section of a
module; existing facts change only with the SDK.
"""

from pytrio_facts.api import (
    API_SURFACE,
    APIFUTURE_METHODS,
    TOP_LEVEL_NAMES,
    MethodFact,
    method,
    methods_named,
)
from pytrio_facts.errors import CATCH_ALL, ERROR_CODES, PLAIN_ERRORS, ErrorFact, error
from pytrio_facts.migration import MIGRATION, REMOVED_ATTRIBUTES, REMOVED_KEYWORDS, Change
from pytrio_facts.models import DEFAULT_BASE_MODEL, MODEL_CATALOGUE
from pytrio_facts.sdk import (
    ADAM_PARAMS,
    DATUM_FIELDS,
    ENV_VARS,
    HF_KEYWORD_RENAMES,
    IGNORE_TARGET_ID,
    IMPORT_LINE,
    LIMITS,
    LORA_DEFAULTS,
    LOSS_NAMES,
    LOSSES,
    METRIC_KEYS,
    SAMPLING_PARAMS,
    SAMPLING_WIRE_KEYS,
    SDK_PIN,
    SDK_VERSION,
    WRONG_METRIC_KEYS,
    FieldFact,
    LossFact,
)

__all__ = [
    "ADAM_PARAMS",
    "APIFUTURE_METHODS",
    "API_SURFACE",
    "CATCH_ALL",
    "DATUM_FIELDS",
    "DEFAULT_BASE_MODEL",
    "ENV_VARS",
    "ERROR_CODES",
    "HF_KEYWORD_RENAMES",
    "IGNORE_TARGET_ID",
    "IMPORT_LINE",
    "LIMITS",
    "LORA_DEFAULTS",
    "LOSSES",
    "LOSS_NAMES",
    "METRIC_KEYS",
    "MIGRATION",
    "MODEL_CATALOGUE",
    "PLAIN_ERRORS",
    "REMOVED_ATTRIBUTES",
    "REMOVED_KEYWORDS",
    "SAMPLING_PARAMS",
    "SAMPLING_WIRE_KEYS",
    "SDK_PIN",
    "SDK_VERSION",
    "TOP_LEVEL_NAMES",
    "WRONG_METRIC_KEYS",
    "Change",
    "ErrorFact",
    "FieldFact",
    "LossFact",
    "MethodFact",
    "error",
    "method",
    "methods_named",
]
