"""The rule API: a rule is a class with metadata, documented examples and `visit_<ast node>` hooks.

Detection runs on the `ast` tree (one walk for all rules, about 10x cheaper than a libcst parse);
fixes run as libcst transformations of the nodes a finding points at, matched by exact position.
See `trio_lint/rules/README.md` for how to add a rule.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from trio_lint.lint.findings import CstTransform, Finding, Fix, NodeEdit, Span
from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.settings.target_version import before

if TYPE_CHECKING:
    import libcst as cst

    from trio_lint.semantics.context import LintContext
    from trio_lint.semantics.model import ModelView
    from trio_lint.semantics.receivers import Kind

__all__ = [
    "ALL_SDKS",
    "ANY_SDK_VALUE",
    "EVERYTHING",
    "FUTURE_API_ISSUE",
    "FUTURE_MEMBERS",
    "PYTRIO",
    "REACH_ROUTES",
    "RESPONSE_ON_FUTURE",
    "STRING_KEYS",
    "VALUE_ROUTES",
    "Checker",
    "CstTransform",
    "Finding",
    "Fix",
    "Invalid",
    "LooksAt",
    "NodeEdit",
    "Reach",
    "Rule",
    "SdkValues",
    "Span",
    "Valid",
    "edit",
    "limited",
    "rename_keyword",
    "replace_with_expression",
    "safe_fix",
    "unsafe_fix",
]


@dataclass(frozen=True)
class Valid:
    """Code the rule must not flag. `config` holds [tool.trio-lint] keys (e.g. {"sdk-modules": [...]})."""

    code: str
    config: dict[str, Any] = field(default_factory=dict)
    path: str = "example.py"


@dataclass(frozen=True)
class Invalid:
    """Code the rule must flag. `fixed` is the expected source after applying the rule's fixes (None:
    the rule must offer no fix here). `line`/`column` (1-based) pin the first finding."""

    code: str
    fixed: str | None = None
    line: int | None = None
    column: int | None = None
    message_contains: str | None = None
    count: int | None = None
    config: dict[str, Any] = field(default_factory=dict)
    path: str = "example.py"
    unsafe: bool = False  # the expected `fixed` needs --unsafe-fixes


# How a value can reach the code a rule checks, one step further than a documented example
# shows it (`tests/trio_lint/rules/reach.py` generates a variant of every example along each): the
# value routes carry the offending value, receiver or result; the placements move the code that
# consumes it. A route a rule does not follow is named under "Limitations" in its doc.
REACH_ROUTES: dict[str, str] = {
    "local-name": "a further local name (`b = a`)",
    "module-constant": "a module-level constant read inside a function",
    "class-attribute": "a class attribute (`Settings.X`)",
    "init-attribute": "`self.x` set in `__init__` and read in another method",
    "helper-return": "the return value of a helper function or method",
    "call-site-parameter": "a function parameter whose argument is given at a call in the module",
    "call-site-method-parameter": "a method parameter whose argument is given at a call in the module",
    "dataclass-default": "a dataclass field default",
    "pydantic-default": "a pydantic field default",
    "argparse-default": "an argparse default (`args.x`)",
    "config-dict": "an entry of a config dict (`CONFIG['x']`)",
    "loop-variable": "a loop variable",
    "dict-entry-get": "a module-level dict entry set under a constant key, read with `.get()`",
    "annotated-parameter": "a parameter annotated with a plain type, its argument given at a call",
    "nested-coroutine-parameter": "a parameter of a nested `async def`, given at its call",
    "gathered-list": "an item of the list `await asyncio.gather(...)` gives",
    "queue-worker": "an item a worker coroutine takes from an `asyncio.Queue`",
    "in-method": "code moved into a method",
    "in-nested-function": "code moved into a nested function",
    "task-create-task": "code in a coroutine started with `asyncio.create_task`",
    "task-gather": "code in a coroutine started with `asyncio.gather`",
    "task-group": "code in a coroutine started in an `asyncio.TaskGroup`",
    "task-via-awaited-helper": "code in a coroutine awaited by a task's coroutine",
}


# The routes that carry a value (the others, `in-*` and `task-*`, move the consuming code).
VALUE_ROUTES: tuple[str, ...] = tuple(
    route for route in REACH_ROUTES if not route.startswith(("in-", "task-"))
)


@dataclass(frozen=True)
class Reach:
    """Which `REACH_ROUTES` a rule follows. `limitations`: the routes it does not follow yet
    (rendered under "## Limitations" in the rule's doc); `not_applicable`: route -> why the
    route changes what the examples mean for this rule (for maintainers, never rendered; the key
    may end in ":valid" or ":invalid" to skip only those examples). Along every other route each
    INVALID example stays flagged and each VALID example quiet (`tests/trio_lint/rules/test_reach.py`)."""

    limitations: frozenset[str] = frozenset()
    not_applicable: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        named = set(self.limitations) | {key.split(":")[0] for key in self.not_applicable}
        unknown = named - set(REACH_ROUTES)
        if unknown:
            raise ValueError(f"unknown reach routes {sorted(unknown)}; known: {list(REACH_ROUTES)}")

    def skips(self, route: str, kind: str) -> bool:
        """True when the `kind` ("valid"/"invalid") variants along `route` are not checked."""
        return route in self.not_applicable or f"{route}:{kind}" in self.not_applicable

    def limitations_section(self) -> str:
        """The "## Limitations" section of the rule's doc ("" when it follows every route)."""
        if not self.limitations:
            return ""
        lines = [
            "## Limitations",
            "",
            "The rule does not yet see the value (or the code that uses it) when it arrives"
            " through:",
        ]
        lines += [
            f"- {label}" for route, label in REACH_ROUTES.items() if route in self.limitations
        ]
        return "\n".join(lines) + "\n"


def limited(*routes: str, **not_applicable: str) -> Reach:
    """`reach = limited("config-dict", ...)`: the routes of `REACH_ROUTES` a rule does not follow."""
    return Reach(frozenset(routes), not_applicable)


class AnyStringKey:
    """The `LooksAt.keys` of a rule that looks at every string-constant key."""

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str)

    def __repr__(self) -> str:
        return "STRING_KEYS"


STRING_KEYS = AnyStringKey()


class SdkValues(NamedTuple):
    """The `LooksAt.receivers` of a rule: the plain names whose attributes and items it may report
    on."""

    symbols: bool  # a name of an SDK symbol (`trio` of `trio.Datum`)
    kinds: frozenset[Kind] | None  # a name the model types as one of these kinds (None: any)


ANY_SDK_VALUE = SdkValues(symbols=True, kinds=None)


@dataclass(frozen=True)
class LooksAt:
    """What a checker's hooks look at, in one declaration (`Rule.looks_at = LooksAt(...)`): the
    walk calls a hook only for the nodes declared here, so a unit's many `print(...)`,
    `self.x` and `args["k"]` cost nothing. A field left None narrows nothing: the hook sees
    every node of its class. `tests/trio_lint/rules/test_call_filters.py` proves, over every example
    and script, that a rule finds the same declaring `EVERYTHING`.

    - `calls`: `visit_Call` sees `x.m(...)` / `m(...)` for `m` in this set ...
    - `sdk_calls`: ... and the calls of these SDK symbols however imported (`"Datum"` for
      `trio.Datum(...)`, `Datum(...)`, `types.Datum(...)`; `"ModelInput.from_ints"`). Either
      set alone narrows `visit_Call` to it.
    - `attributes`: `visit_Attribute` sees `x.a` for `a` in this set.
    - `keys`: `visit_Subscript` sees `x["k"]` for a string constant `k` in this set (or any
      string key with `STRING_KEYS`).
    - `receivers`: `visit_Attribute` and `visit_Subscript` see `x.a` / `x[k]` with `x` a plain
      name only when the model knows `x` as these `SdkValues` say (whatever `pytrio_only`).
    """

    calls: frozenset[str] | None = None
    sdk_calls: frozenset[str] | None = None
    attributes: frozenset[str] | None = None
    keys: frozenset[str] | AnyStringKey | None = None
    receivers: SdkValues | None = None

    def __post_init__(self) -> None:
        # Any iterable of names is taken (`calls={"sample"}`, a tuple, a dict's keys).
        for name in ("calls", "sdk_calls", "attributes", "keys"):
            value = getattr(self, name)
            if value is not None and value is not STRING_KEYS and not isinstance(value, frozenset):
                if isinstance(value, str):
                    raise TypeError(f"LooksAt.{name}: a collection of names, not one string")
                object.__setattr__(self, name, frozenset(value))


# A checker without a declaration: every node of every class it hooks.
EVERYTHING = LooksAt()


# The SDKs a rule's premise can hold for (`Rule.sdks`): a unit is PyTRIO code unless it imports
# another `sdk-modules` entry (tinker) and not pytrio (`SemanticModel.sdk`).
PYTRIO: frozenset[str] = frozenset({"pytrio"})
# `Rule.supersedes` entries naming a class of members read on a future rather than one member
# (which members they are depends on the future read, not on a name a rule could list):
# RESPONSE_ON_FUTURE, a member of the response the future holds, read on the future where PTR101
# missing-result looks (`_futures.checked_receiver`); FUTURE_API_ISSUE, a member of neither the
# future nor its response that the API data flags on the future (`fut.result_async()`).
RESPONSE_ON_FUTURE = "pytrio.types.APIFuture.<response>"
FUTURE_API_ISSUE = "pytrio.types.APIFuture.<api>"
FUTURE_MEMBERS = frozenset({RESPONSE_ON_FUTURE, FUTURE_API_ISSUE})

ALL_SDKS: frozenset[str] = frozenset({"pytrio", "tinker"})
SDK_NAMES = {"pytrio": "PyTRIO", "tinker": "Tinker"}


class Checker:
    """What walks a unit and reports: `visit_<AstType>` / `leave_<AstType>` hooks, `finish`, and
    the codes it may report (`codes`). Every `Rule` is a checker of its own one code. A checker
    that finds the issues of several codes in one analysis (the conformance family: a call's
    keywords, positional count and callee are one lookup) is a class of its own (in a `_`
    module), declares `codes`, and reports each finding with its code,
    `self.report(node, message, code="PTR004", fix=...)`; each of those codes keeps its rule
    module for its metadata (doc, VALID/INVALID, fix safety, former names) and names the checker
    (`checker = ConformanceChecker`). The dispatch makes one checker per unit for all its
    selected codes and walks it once; a finding of a code that is not selected is dropped.

    `looks_at` says which nodes of the hooked classes the hooks look at (`LooksAt`);
    `pytrio_only` which names the model answers for (`Rule.pytrio_only`). A new instance is made
    for every module, so per-file state lives on `self`.
    """

    codes: ClassVar[tuple[str, ...]] = ()
    _own_rules: ClassVar[Mapping[str, type[Rule]]] = {}
    # What the hooks look at beyond the node classes they name (`LooksAt`): the walk calls them
    # for those nodes alone. Default: every node of each hooked class.
    looks_at: ClassVar[LooksAt] = EVERYTHING
    # True: in PyTRIO code, names bound by another SDK module (tinker) are not the checker's.
    pytrio_only: ClassVar[bool] = False

    def __init__(self, ctx: LintContext, rules: Sequence[type[Rule]] = ()) -> None:
        self.ctx = ctx
        # The unit's semantic model, answering with this checker's `pytrio_only`
        # (`trio_lint/semantics/model.py` lists the queries). In Tinker code (which only meets
        # rules naming "tinker" in `sdks`) nothing is PyTRIO's to hide.
        self.model: ModelView = ctx.for_rule(self.pytrio_only and not ctx.model.other_sdk_only).view
        # The selected codes' rules (metadata: message, severity, name), by code.
        self.rules: Mapping[str, type[Rule]] = {rule.code: rule for rule in rules}

    def report(
        self,
        node: ast.AST,
        message: str | None = None,
        *,
        code: str | None = None,
        fix: Fix | None = None,
        severity: Severity | None = None,
    ) -> None:
        """A finding at `node` of `code` (a checker of one code may leave it out); `message`
        and `severity` default to the code's rule's."""
        if code is None:
            if len(self.codes) != 1:
                raise TypeError(f"{type(self).__name__} reports {self.codes}: name the code")
            code = self.codes[0]
        rule = self.rules.get(code)
        if rule is None:
            if code not in self.codes:
                raise ValueError(f"{type(self).__name__} declares {self.codes}, not {code}")
            return  # declared, not selected
        self.ctx.add_finding(
            Finding(
                code=code,
                span=Span.of(node),
                message=message or rule.message,
                severity=severity or rule.severity,
                fix=fix,
                name=rule.name,
            )
        )

    def finish(self) -> None:
        """Called once after the walk; override for whole-module checks."""


class Rule(Checker):
    """Base class of every rule: the metadata of one code, and (unless it names another
    `checker`) the checker of that code. Subclasses set the metadata below and define hooks:

    - `visit_<AstType>(self, node)` / `leave_<AstType>(self, node)` for `ast` node classes (not
      operators or contexts), run in the order the model's pass met the nodes (`rules/README.md`);
    - `finish(self)` after the whole module was walked.
    Inside hooks ask `self.model` (names, receivers, values; `semantics/model.py`), read
    `self.ctx` (config, source, enclosing functions) and call `self.report(...)`.
    A new instance is made for every module, so per-file state lives on `self`.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    default_enabled: ClassVar[bool] = True
    # The most permissive applicability any of this rule's fixes can have (documentation + rule --all).
    fix_safety: ClassVar[Applicability] = Applicability.NONE
    # True: in PyTRIO code, names bound by another SDK module (tinker) are not the rule's (the
    # checker of a rule of several codes asks the model accordingly for this code).
    pytrio_only: ClassVar[bool] = False
    # The SDKs whose code the rule checks: its premise, and every fact it reads, hold for them
    # (a Tinker module meets only the rules naming "tinker"). Unset: PYTRIO for a `pytrio_only`
    # rule, else ALL_SDKS. Rendered as "Applies to" in the rule's doc.
    sdks: ClassVar[frozenset[str]] = ALL_SDKS
    _sdks_derived: ClassVar[bool] = True
    # SDK versions the rule applies to: min_sdk <= target-version < max_sdk (None: unbounded).
    min_sdk: ClassVar[str | None] = None
    max_sdk: ClassVar[str | None] = None
    # The checker that finds and reports this code (`Checker`); unset: the rule itself, whose
    # hooks (and `looks_at`) are then its own.
    checker: ClassVar[type[Checker]]
    # SDK API members whose conformance finding (PTR003/PTR004/PTR213...) this rule reports
    # instead, with its own message and fix, so one mistake gets one finding:
    # "pytrio.types.SampleResponse.samples" (an attribute or method of a class),
    # "pytrio.SamplingParams(max_new_tokens=)" (a keyword). Data symbols of `api_versions.json`;
    # `RESPONSE_ON_FUTURE` / `FUTURE_API_ISSUE` claim a class of members read on a future. Read in
    # one place, `rules/_supersedes.py`, which every checker asks before reporting.
    supersedes: ClassVar[frozenset[str]] = frozenset()
    # ruff-style documentation: What it does / Why is this bad? / Fix safety / References (public:
    # "pytrio 0.2.9: pytrio.X" or a URL). Example and "Use instead" are rendered from INVALID[0] and
    # VALID[0] (`trio_lint.output.explain.rule_doc`).
    doc: ClassVar[str] = ""
    # Where the rule's claims were checked, for maintainers (never printed): citations of the SDK
    # wheels as `release:file:lines` (`029:client/sampling.py:168`), public URLs, library
    # releases and symbols; tests/trio_lint/rules/test_rule_evidence.py checks the format.
    evidence: ClassVar[str] = ""
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()
    # The routes of `REACH_ROUTES` this rule does not follow (see `Reach`).
    reach: ClassVar[Reach] = Reach()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _bind_checker(cls)
        # `sdks` set by the class or an ancestor wins; otherwise it follows `pytrio_only`.
        declared = next(
            (
                klass.__dict__["sdks"]
                for klass in cls.__mro__
                if klass is not Rule
                and "sdks" in klass.__dict__
                and not klass.__dict__.get("_sdks_derived")
            ),
            None,
        )
        if declared is None:
            cls.sdks = PYTRIO if cls.pytrio_only else ALL_SDKS
            cls._sdks_derived = True
        else:
            cls.sdks = declared
            cls._sdks_derived = False
        unknown = set(cls.sdks) - set(SDK_NAMES)
        if unknown:
            raise ValueError(f"{cls.__name__}.sdks: unknown SDKs {sorted(unknown)}")
        # The declared limitations are the doc's Limitations section (one source), placed
        # before References.
        section = cls.__dict__.get("reach", Reach()).limitations_section()
        doc = cls.__dict__.get("doc")
        if section and doc and "## Limitations" not in doc:
            text = textwrap.dedent(doc).strip() + "\n"
            head, sep, tail = text.partition("## References")
            cls.doc = f"{head}{section}\n{sep}{tail}" if sep else f"{text}\n{section}"

    def __init__(self, ctx: LintContext, rules: Sequence[type[Rule]] = ()) -> None:
        super().__init__(ctx, rules)
        if not rules:  # its own checker: its own code (one table per class, not per unit)
            self.rules = type(self)._own_rules

    @classmethod
    def applies_to(cls, sdk_version: str) -> bool:
        if cls.min_sdk is not None and before(sdk_version, cls.min_sdk):
            return False
        return cls.max_sdk is None or before(sdk_version, cls.max_sdk)


def _bind_checker(rule: type[Rule]) -> None:
    """Set `rule.codes` and `rule.checker`, and refuse what the dispatch could not serve: a rule
    of another checker with hooks of its own, or whose code its checker does not declare."""
    if "code" in rule.__dict__:
        rule.codes = (rule.code,)
    declared = rule.__dict__.get("checker")
    inherited = getattr(rule, "checker", None)
    if declared is None and (inherited is None or issubclass(rule, inherited)):
        rule.checker = rule  # its own checker (also a subclass of a rule that is)
        if "code" in rule.__dict__ or "_own_rules" not in rule.__dict__:
            rule._own_rules = {rule.code: rule} if hasattr(rule, "code") else {}
        return
    checker = rule.checker
    hooks = [
        attr
        for klass in rule.__mro__
        if klass not in (Rule, Checker, object) and not issubclass(checker, klass)
        for attr in klass.__dict__
        if attr.startswith(("visit_", "leave_")) or attr in ("finish", "looks_at")
    ]
    if hooks:
        raise TypeError(f"{rule.__name__}: its checker {checker.__name__} walks; remove {hooks}")
    if "code" in rule.__dict__ and rule.code not in checker.codes:
        raise TypeError(f"{checker.__name__}.codes does not declare {rule.code}")


# --- fix helpers shared by rules -------------------------------------------------------------


def edit(node: ast.AST, kind: str, transform: CstTransform) -> NodeEdit:
    """Transform the libcst node named `kind` (a libcst class name: "Call", "Arg") at `node`'s
    position. A name, not the class: detection never imports libcst (~0.25 s)."""
    return NodeEdit(Span.of(node), kind, transform)


def safe_fix(message: str, *edits: NodeEdit) -> Fix:
    return Fix(message, Applicability.SAFE, tuple(edits))


def unsafe_fix(message: str, *edits: NodeEdit) -> Fix:
    return Fix(message, Applicability.UNSAFE, tuple(edits))


def rename_keyword(new_name: str) -> CstTransform:
    """For a `keyword` finding: `old=value` -> `new_name=value`, keeping spacing and comments."""

    def transform(node: cst.CSTNode) -> cst.CSTNode:
        import libcst as cst

        assert isinstance(node, cst.Arg) and node.keyword is not None
        return node.with_changes(keyword=node.keyword.with_changes(value=new_name))

    return transform


def replace_with_expression(code: str) -> CstTransform:
    """Replace the whole node with a parsed expression (parsed when the fix is applied)."""

    def transform(_node: cst.CSTNode) -> cst.CSTNode:
        import libcst as cst

        return cst.parse_expression(code)

    return transform
