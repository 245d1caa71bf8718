"""Conformance of calls and attributes to the API of the target pytrio release.

One checker (`ConformanceChecker` below; not a rule module: the registry skips `checkers/`) finds
the issues and reports each with its code; the rule module of each code (a `ConformanceRule`)
keeps its metadata and says how its issues are worded: PTR003 removed-api, PTR004
removed-keyword, PTR005 changed-signature, PTR006 removed-result-attribute, PTR007 newer-api,
PTR203 unknown-type-field, PTR212 unknown-keyword, PTR213 unknown-attribute.
Every answer comes from `pytrio_facts/api_versions.json`, the API of
every released pytrio read from its wheel, so "removed in X / added in Y / renamed in Z" names
the release.

Queries go to the unit's semantic model (`ctx.model`, PyTRIO code only: these are facts of
PyTRIO's SDK, not Tinker's). Only expressions the model resolves to a PyTRIO object are checked: SDK names
(`trio.configure`, `trio.types.X`, `from pytrio import X`) and receivers typed as clients,
futures or result objects. Anything else is unknown and never reported.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import TYPE_CHECKING, Literal, NamedTuple

from pytrio_facts.api_model import (
    PYDANTIC_MEMBERS,
    Class,
    Function,
    History,
    Module,
    api_data,
    history,
    renamed,
)
from trio_lint.rules import _futures as futures
from trio_lint.rules._supersedes import supersession
from trio_lint.rules.base import (
    ANY_SDK_VALUE,
    FUTURE_API_ISSUE,
    RESPONSE_ON_FUTURE,
    Checker,
    LooksAt,
    Rule,
)

if TYPE_CHECKING:
    from trio_lint.semantics.context import LintContext
    from trio_lint.semantics.model import SemanticModel
    from trio_lint.semantics.receivers import SdkType

Category = Literal["removed", "added", "unknown", "positional"]
What = Literal["name", "method", "attribute", "keyword"]


@dataclass(frozen=True, slots=True)
class Issue:
    """One mismatch between the code and the target release."""

    category: Category
    what: What
    node: ast.AST  # where to report
    symbol: str  # the data symbol: "pytrio.configure", "pytrio.TrainingClient", "pytrio"
    owner: str  # for messages: "pytrio.configure", "TrainingClient.save_state", "pytrio.types"
    name: str  # the attribute, method or keyword ("" for positional issues)
    history: History
    target: str
    rename: str | None = None  # the new name (renamed in `history.removed_in`)
    catch_all: str | None = None  # the `**kwargs` an unknown keyword lands in
    pydantic: bool = False  # the owner is an SDK pydantic model (a type or a result)
    given: int = 0  # positional issues: arguments passed
    allowed: int = 0  # positional issues: what the target release takes
    earlier: tuple[str, int, tuple[str, ...]] | None = None  # (release, count, names) that fit
    member: str = ""  # call issues: the method called on `symbol` ("" for functions, constructors)


def target(ctx: LintContext) -> str:
    return str(ctx.sdk_version)


@cache  # the API data is fixed for the process; every typed receiver of every unit asks
def _kind_symbol(kind: str) -> str | None:
    """The data symbol of a receiver kind (a `Kind` is a `str`: no conversion needed)."""
    symbols = _symbols()
    for candidate in (f"pytrio.{kind}", f"pytrio.types.{kind}"):
        if candidate in symbols:
            return candidate
    return None


@cache
def _symbols() -> frozenset[str]:
    return frozenset(api_data().symbol_names())


def _display(symbol: str) -> str:
    """`pytrio.types.SampleResponse` -> `SampleResponse`; functions and modules stay dotted."""
    head, _, last = symbol.rpartition(".")
    return last if head and last[:1].isupper() else symbol


def attribute_issue(ctx: LintContext, node: ast.Attribute, *, called: bool) -> Issue | None:
    """`trio.X`, `trio.types.X`, `Class.member`, or `obj.member` on a typed PyTRIO object."""
    return _attribute_issue(ctx.model, node, target(ctx), called=called)


def _attribute_issue(
    model: SemanticModel, node: ast.Attribute, release: str, *, called: bool
) -> Issue | None:
    if node.attr.startswith("_"):
        return None  # private members are no API (and asking the model costs)
    parent = model.qualified_name(node.value, pytrio_only=True)
    typ = model.type_of(node.value, pytrio_only=True) if parent is None else None
    return _member_issue(node, parent, typ, release, called=called)


def _member_issue(
    node: ast.Attribute,
    parent: str | None,
    typ: SdkType | None,
    release: str,
    *,
    called: bool,
) -> Issue | None:
    """`attribute_issue` once the receiver's qualified name (or else its type) is known."""
    name = node.attr
    if name.startswith("_"):
        return None
    if parent is not None:
        template = _named_member(parent, name, release, called)
        return template(node=node) if template is not None else None
    symbol = _kind_symbol(typ.kind) if typ is not None else None
    if typ is None or symbol is None:
        return None
    template = _typed_member(symbol, name, release, called)
    if template is None:
        return None
    if (
        typ.is_future
        and supersession().future_member(RESPONSE_ON_FUTURE)
        and futures.checked_receiver(node.value)
        and response_has(typ, name, release)
    ):
        return None  # the response's member read on its future: its `supersedes` owner's
    return template(node=node)


# An issue less its node: what depends only on (symbol, name, release, called) is computed once
# per process, since most members read on SDK objects (`trio.Datum`, `out.metrics`) recur and
# have no issue.
_Template = Callable[..., Issue]


@cache
def _named_member(parent: str, name: str, release: str, called: bool) -> _Template | None:
    """The issue of `name` read on the SDK name `parent` (a module or a class), if any."""
    data = api_data()
    symbol = _canonical_symbol(parent)
    if symbol is None:
        return None
    found = data.symbol(symbol, release)
    if found is None or isinstance(found, Function):
        return None
    if isinstance(found, Class) and _class_has(found, name):
        return None
    if isinstance(found, Module) and name in found.names:
        return None
    what: What = "name" if isinstance(found, Module) else ("method" if called else "attribute")
    seen = history(data.present(symbol, name), release)
    if not seen.known and isinstance(found, Class) and not found.closed:
        return None
    return partial(
        Issue,
        category=_category(seen),
        what=what,
        symbol=symbol,
        owner=_display(symbol),
        name=name,
        history=seen,
        target=release,
        pydantic=isinstance(found, Class) and found.pydantic,
    )


@cache
def _typed_member(symbol: str, name: str, release: str, called: bool) -> _Template | None:
    """The issue of `name` read on an instance of the SDK class `symbol`, if any (before the
    future's exception, which depends on the receiver expression)."""
    data = api_data()
    found = data.symbol(symbol, release)
    if not isinstance(found, Class) or _class_has(found, name):
        return None
    if supersession().attribute(symbol, name):
        return None  # another rule's, with its own message and fix
    seen = history(data.present(symbol, name), release)
    if not seen.known and not (found.closed and (called or found.pydantic)):
        # An instance attribute set outside __init__ is not listed: only calls of unknown
        # methods and reads of unknown fields of (closed) pydantic models are reported.
        return None
    return partial(
        Issue,
        category=_category(seen),
        what="method" if called else "attribute",
        symbol=symbol,
        owner=_display(symbol),
        name=name,
        history=seen,
        target=release,
        rename=renamed(symbol, name, seen.removed_in) if seen.removed_in else None,
        pydantic=found.pydantic,
    )


def _class_has(found: Class, name: str) -> bool:
    return found.has_member(name) or (found.pydantic and name in PYDANTIC_MEMBERS)


def response_has(future: SdkType, name: str, release: str) -> bool | None:
    """Whether the response a future holds has `name` on `release` (`metrics` on the future of
    `forward_backward`): None when that response is not a class of the release (a REST result
    the model does not name, a plain list or dict)."""
    held = future.of
    symbol = _kind_symbol(held.kind) if held is not None else None
    found = api_data().symbol(symbol, release) if symbol is not None else None
    if not isinstance(found, Class):
        return None
    return _class_has(found, name)


def _canonical_symbol(qualname: str) -> str | None:
    """A qualified name as a data symbol (`pytrio.Datum` is also `pytrio.types.Datum`)."""
    symbols = _symbols()
    if qualname in symbols:
        return qualname
    head, _, name = qualname.rpartition(".")
    if head == "pytrio" and f"pytrio.types.{name}" in symbols:
        return f"pytrio.types.{name}"
    return None


def import_issues(ctx: LintContext, node: ast.ImportFrom) -> list[Issue]:
    """`from pytrio import X` / `from pytrio.types import X` with X missing on the target.
    Names 0.2 removed from `pytrio` itself are PTR002's (internal-import) to report."""
    if node.level or node.module not in ("pytrio", "pytrio.types"):
        return []
    release = target(ctx)
    data = api_data()
    module = data.symbol(node.module, release)
    if not isinstance(module, Module):
        return []
    issues = []
    for alias in node.names:
        if alias.name == "*" or alias.name in module.names:
            continue
        seen = history(data.present(node.module, alias.name), release)
        if node.module == "pytrio" and seen.removed_in is not None:
            continue
        issues.append(
            Issue(
                _category(seen), "name", alias, node.module, node.module, alias.name, seen, release
            )
        )
    return issues


def _category(seen: History) -> Category:
    if seen.removed_in is not None:
        return "removed"
    if seen.added_in is not None:
        return "added"
    return "unknown"


class Callee(NamedTuple):
    """A tuple: it keys the per-process caches below on every resolved call (C-level hash)."""

    symbol: str  # data symbol of the function or the class
    member: str  # method name; "" for the function itself or the class constructor
    owner: str  # for messages
    pydantic: bool = False


def _typed_callee(
    ctx: LintContext, node: ast.Call, func: ast.Attribute, typ: SdkType | None
) -> Callee | None:
    """`recv.method(...)` with `typ` the receiver's type (None: not typed)."""
    if typ is not None:
        symbol = _kind_symbol(typ.kind)
    else:
        # `x.forward_backward(...)`: a method name no other library uses types its receiver.
        found = ctx.model.client_call(node, pytrio_only=True)
        symbol = _kind_symbol(found[0]) if found is not None else None
    return _method_callee(symbol, func.attr) if symbol is not None else None


@cache  # SDK names recur in every unit (`trio.Datum`, `trio.ModelInput.from_ints`)
def _named_callee(qualname: str) -> Callee | None:
    symbol = _canonical_symbol(qualname)
    if symbol is not None:
        found = _any_release(symbol)
        if isinstance(found, Function):
            return Callee(symbol, "", symbol)
        if isinstance(found, Class):
            return Callee(symbol, "", _display(symbol), found.pydantic)
        return None
    head, _, member = qualname.rpartition(".")
    owner = _canonical_symbol(head)
    if owner is not None and isinstance(_any_release(owner), Class):
        return Callee(owner, member, f"{_display(owner)}.{member}")
    return None


@cache
def _method_callee(symbol: str, member: str) -> Callee | None:
    if not isinstance(_any_release(symbol), Class):
        return None
    return Callee(symbol, member, f"{_display(symbol)}.{member}")


@cache  # a scan over every release, for every resolved call of every unit
def _any_release(symbol: str) -> Function | Class | Module | None:
    data = api_data()
    for version in reversed(data.versions):
        found = data.symbol(symbol, version)
        if found is not None:
            return found
    return None


@cache
def _function_at(target_callee: Callee, release: str) -> Function | None:
    found = api_data().symbol(target_callee.symbol, release)
    if isinstance(found, Function):
        return found
    if isinstance(found, Class):
        if target_callee.member:
            return found.methods.get(target_callee.member)
        return found.constructor()
    return None


class _CallPlan(NamedTuple):
    """What a call's issues depend on besides its nodes: the callee, the release and the keyword
    names (the positional count is compared with `limit` per call)."""

    function: Function
    takes_nothing: bool  # a signature without parameters
    limit: int | None  # `Function.max_positional`
    rejected: tuple[int, ...]  # indexes of the keywords the release does not accept


@cache  # most calls of a unit repeat a (callee, keywords) pair and have no issue
def _call_plan(found: Callee, release: str, keywords: tuple[str | None, ...]) -> _CallPlan | None:
    function = _function_at(found, release)
    if function is None:
        return None  # the callee itself is missing: the attribute check reports it
    accepted = function.keywords
    superseded = supersession()
    rejected = tuple(
        index
        for index, name in enumerate(keywords)
        if name is not None and name not in accepted and not superseded.keyword(found.symbol, name)
    )
    return _CallPlan(function, not function.params, function.max_positional, rejected)


def _callee_issues(node: ast.Call, found: Callee, release: str) -> list[Issue]:
    keywords = tuple([kw.arg for kw in node.keywords]) if node.keywords else ()
    plan = _call_plan(found, release, keywords)
    if plan is None:
        return []
    if plan.takes_nothing and (node.args or keywords):
        # A signature that takes nothing: one "changed signature" finding for the whole call.
        names = tuple(name for name in keywords if name is not None)
        earlier = _earlier_fit(found, release, len(node.args), names)
        given = len(node.args) + len(keywords)
        return [_positional(node, found, release, given=given, allowed=0, earlier=earlier)]
    issues = (
        [_keyword_issue(node.keywords[i], found, plan.function, release) for i in plan.rejected]
        if plan.rejected
        else []  # the common case, without a comprehension's frame
    )
    limit = plan.limit
    given = len(node.args)
    if limit is not None and given > limit and not _has_starred(node.args):
        earlier = _earlier_fit(found, release, given)
        issues.append(
            _positional(node, found, release, given=given, allowed=limit, earlier=earlier)
        )
    return issues


def _has_starred(args: list[ast.expr]) -> bool:
    """A `*xs` argument: how many arguments the call passes is not known."""
    return any(isinstance(arg, ast.Starred) for arg in args)


def _keyword_issue(kw: ast.keyword, found: Callee, function: Function, release: str) -> Issue:
    """A keyword `function` (the callee on `release`) does not accept."""
    assert kw.arg is not None  # `**kwargs` is never rejected
    rename_key = f"{found.symbol}.{found.member}" if found.member else found.symbol
    present = api_data().present(found.symbol, f"{found.member}:{kw.arg}", kind="keyword")
    seen = history(present, release)
    return Issue(
        _category(seen),
        "keyword",
        kw,
        found.symbol,
        found.owner,
        kw.arg,
        seen,
        release,
        rename=renamed(rename_key, kw.arg, seen.removed_in) if seen.removed_in else None,
        catch_all=function.catch_all.name if function.catch_all is not None else None,
        pydantic=found.pydantic,
        member=found.member,
    )


def _positional(
    node: ast.Call,
    found: Callee,
    release: str,
    *,
    given: int,
    allowed: int,
    earlier: tuple[str, int, tuple[str, ...]] | None,
) -> Issue:
    """A call with more arguments than the target release's signature takes (PTR005's)."""
    return Issue(
        "positional",
        "keyword",
        node,
        found.symbol,
        found.owner,
        "",
        History(True),
        release,
        pydantic=found.pydantic,
        given=given,
        allowed=allowed,
        earlier=earlier,
        member=found.member,
    )


def _earlier_fit(
    found: Callee, release: str, given: int, keywords: tuple[str, ...] = ()
) -> tuple[str, int, tuple[str, ...]] | None:
    """The last release before `release` whose signature took `given` positional arguments (and
    these keywords): (release, count, the parameters they filled)."""
    data = api_data()
    before = data.versions[: data.index(release)]
    for version in reversed(before):
        function = _function_at(found, version)
        if function is None or not set(keywords) <= function.keywords:
            continue
        limit = function.max_positional
        if limit is None or limit >= given:
            return version, given, (*function.positional_names[:given], *keywords)
    return None


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# ---- the checker: one analysis, eight codes ----------------------------------------------------

# The codes of issues of names (methods and attributes read or written, `from pytrio import X`):
# only these make the checker look at attributes and imports.
NAME_CODES = frozenset({"PTR003", "PTR006", "PTR007", "PTR213"})


def issues_of_call(checker: ConformanceChecker, node: ast.Call) -> list[Issue]:
    """A call's issues: its method (missing on the target), keywords and positional count.
    Each model query is asked once: the receiver's name and type answer both whether the call
    may be the SDK's (most calls of a unit are not) and what it calls."""
    func = node.func
    model = checker.ctx.model
    release = checker.release
    if not isinstance(func, ast.Attribute):
        qualname = model.qualified_name(func, pytrio_only=True)
        found = _named_callee(qualname) if qualname is not None else None
        return _callee_issues(node, found, release) if found is not None else []
    checker.called.add(id(func))
    receiver = func.value
    parent = model.qualified_name(receiver, pytrio_only=True)
    typ: SdkType | None = None
    if parent is None:
        typ = model.type_of(receiver, pytrio_only=True)
        if typ is None and model.client_call(node, pytrio_only=True) is None:
            return []  # neither an SDK name, a typed SDK object nor a method only the SDK has
    method = _member_issue(func, parent, typ, release, called=True)
    # `r.m` names an SDK symbol only when `r` does (a qualified name is its receiver's plus `.m`)
    qualname = model.qualified_name(func, pytrio_only=True) if parent is not None else None
    if qualname is not None:
        found = _named_callee(qualname)
    else:
        if parent is not None:  # a named receiver names its members: not reached, kept exact
            typ = model.type_of(receiver, pytrio_only=True)
        found = _typed_callee(checker.ctx, node, func, typ)
    issues = _callee_issues(node, found, release) if found is not None else []
    return [method, *issues] if method is not None else issues


class ConformanceChecker(Checker):
    """Finds where calls, attributes and imports disagree with the target release's API, and
    reports each issue with the code `code_of` gives it: one walk and one model query per node
    for the eight codes. How an issue of a code is worded (message, advice, fix) is that code's
    rule's `report_issue`."""

    codes = ("PTR003", "PTR004", "PTR005", "PTR006", "PTR007", "PTR203", "PTR212", "PTR213")
    # Facts of PyTRIO's own SDK, not Tinker's.
    pytrio_only = True
    # Attributes of a plain name only when the name is an SDK symbol or a typed SDK value.
    looks_at = LooksAt(receivers=ANY_SDK_VALUE)

    def __init__(self, ctx: LintContext, rules: Sequence[type[Rule]] = ()) -> None:
        super().__init__(ctx, rules)
        self.release = target(ctx)  # asked by every call and attribute
        self.called: set[int] = set()  # ids of `Attribute` nodes that are callees
        self.names = not NAME_CODES.isdisjoint(self.rules)  # attribute and import issues wanted
        # The `try` statements around the node being visited, each with the function it is in
        # (None: the module): PTR005 looks for a compatibility shim among them.
        self.enclosing_trys: list[tuple[ast.Try, ast.AST | None]] = []

    def visit_Try(self, node: ast.Try) -> None:
        stack = self.ctx.function_stack
        self.enclosing_trys.append((node, stack[-1] if stack else None))

    def leave_Try(self, node: ast.Try) -> None:
        self.enclosing_trys.pop()

    def visit_Call(self, node: ast.Call) -> None:
        for issue in issues_of_call(self, node):
            self._report(issue, node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not self.names or id(node) in self.called:
            return  # a call's callee: the call's issues include it
        issue = _attribute_issue(self.ctx.model, node, self.release, called=False)
        if issue is not None:
            self._report(issue, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if self.names:
            for issue in import_issues(self.ctx, node):
                self._report(issue, node)

    def _report(self, issue: Issue, node: ast.AST) -> None:
        rule = self.rules.get(code_of(issue))
        if rule is not None:  # selected: worded by its rule
            assert issubclass(rule, ConformanceRule)
            rule.report_issue(self, issue, node)


class ConformanceRule(Rule):
    """The rule of one of `ConformanceChecker`'s codes: its metadata, and how one of its issues
    is reported (`report_issue`)."""

    checker = ConformanceChecker
    pytrio_only = True
    # A member of neither a future nor its response that the API data flags on the future
    # (`fut.result_async()`) is a misnamed way of waiting: these codes report it, not PTR101.
    supersedes = frozenset({FUTURE_API_ISSUE})

    @classmethod
    def report_issue(cls, checker: ConformanceChecker, issue: Issue, node: ast.AST) -> None:
        """Report one issue of this code through `checker` (`checker.report(..., code=cls.code)`);
        `node` is the visited node (the `ast.Call` for keyword and positional issues)."""
        raise NotImplementedError


def code_of(issue: Issue) -> str:
    """Which rule reports an issue (the codes users already suppress keep their meaning)."""
    if issue.category == "positional":
        return "PTR005"
    if issue.category == "added":
        return "PTR007"
    if issue.what == "keyword":
        if issue.category == "removed":
            return "PTR004"
        return "PTR203" if issue.pydantic else "PTR212"
    if issue.category == "removed":
        return "PTR006" if issue.pydantic else "PTR003"
    return "PTR213"


def consequence(issue: Issue) -> str:
    """What the target release does with it, at run time."""
    if issue.what == "keyword" and issue.catch_all is not None:
        return (
            f"pytrio {issue.target} ignores it with only a UserWarning (it lands in "
            f"`**{issue.catch_all}`), so the setting silently keeps its default"
        )
    if issue.what == "keyword":
        error = "ValidationError" if issue.pydantic else "TypeError"
    elif isinstance(issue.node, ast.alias):
        error = "ImportError"
    else:
        error = "AttributeError"
    return f"raises `{error}` on pytrio {issue.target}"


def subject(issue: Issue) -> str:
    """`pytrio.configure(timeout=)`, `RestClient.list_weights`, `pytrio.ImageChunk`."""
    if issue.what == "keyword":
        return f"`{issue.owner}({issue.name}=)`"
    if issue.what == "method":
        return f"`{issue.owner}.{issue.name}()`"
    return f"`{issue.owner}.{issue.name}`"


def describe(issue: Issue) -> str:
    """The shared first part of a message: what happened to the name, and in which release."""
    seen = issue.history
    if issue.category == "removed":
        if issue.rename is not None:
            text = f"renamed to `{issue.rename}` in pytrio {seen.removed_in}"
        else:
            text = f"removed in pytrio {seen.removed_in} (last in {seen.last_seen})"
        return f"{subject(issue)} was {text}"
    if issue.category == "added":
        return (
            f"{subject(issue)} was added in pytrio {seen.added_in}; the target release "
            f"{issue.target} does not have it"
        )
    if issue.what == "keyword":
        return f"{subject(issue)}: no pytrio release has this keyword"
    kind = {"method": "method", "attribute": "attribute", "name": "name"}[issue.what]
    return f"{subject(issue)}: no pytrio release has this {kind}"


def callee_function(issue: Issue) -> Function | None:
    """The target release's signature behind a call issue."""
    return _function_at(Callee(issue.symbol, issue.member, issue.owner), issue.target)


def member_names(issue: Issue) -> list[str]:
    """The names the owner has on the target release (for "did you mean")."""
    found = api_data().symbol(issue.symbol, issue.target)
    if isinstance(found, Module):
        return [name for name in found.names if found.names[name] != "module"]
    if isinstance(found, Class):
        return sorted(
            {*found.methods, *found.properties, *found.attributes, *found.fields} - {"__init__"}
        )
    return []
