"""What differs between Tinker's public API and pytrio's, from both SDKs' generated facts.

Tinker's side is `tinker_api.json` (pytrio_facts/generate_tinker.py, read from the newest tinker
wheel), pytrio's is `api_versions.json` at the pinned release plus the checked facts of
`pytrio_facts.sdk`. Nothing here imports either SDK. docgen renders
`references/porting-from-tinker.md` from these rows; the only hand-written part is `NOTES`, the
advice for a row, and tests/pytrio_facts/test_porting.py fails when a note's row disappears.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pytrio_facts import sdk
from pytrio_facts.api_model import ApiData, Class, Function, Module, Symbol, api_data

TINKER_DATA = Path(__file__).with_name("tinker_api.json")
CLIENTS = ("ServiceClient", "TrainingClient", "SamplingClient", "RestClient", "APIFuture")
# Clients a Tinker script builds with `tinker.X(...)` (the others come from factories).
CONSTRUCTED = ("ServiceClient", "RestClient")
# Types that changed their name; both names are checked to exist
# (tests/pytrio_facts/test_porting.py).
RENAMED_TYPES = {"SampledSequence": "SampleSequence"}

# Advice for a row, keyed by the row's key. A key names a Tinker symbol or member
# (`tinker.X`, `tinker.Class.member`), a metric key (`metric:K`) or a loss (`loss:NAME`).
NOTES: dict[str, str] = {
    "tinker.APIFuture.result_async": (
        "`await future` (pytrio's `APIFuture` is awaitable), or `future.result()` in sync code"
    ),
    "tinker.ServiceClient.create_lora_training_client": (
        "pytrio returns the client itself: drop the `.result()` or `await`"
    ),
    "tinker.ServiceClient.create_sampling_client": (
        "pytrio returns the client itself: drop the `.result()` or `await`"
    ),
    "tinker.ServiceClient.create_training_client_from_state": (
        "pytrio returns the client itself: drop the `.result()` or `await`"
    ),
    "tinker.ServiceClient.create_training_client_from_state_with_optimizer": (
        "pytrio returns the client itself: drop the `.result()` or `await`"
    ),
    "tinker.TrainingClient.create_sampling_client": (
        "pytrio returns the client itself: drop the `.result()` or `await`"
    ),
    "tinker.TrainingClient.save_weights_and_get_sampling_client": (
        "pytrio takes no name and returns the client itself: call it with no arguments and drop "
        "the `.result()` or `await`; for weights you keep, `save_weights_for_sampler(name)`"
    ),
    "tinker.ServiceClient.__init__": (
        "the key and URL come from `trio login` or `PYTRIO_API_KEY` / `PYTRIO_BASE_URL` "
        "(or `trio.configure(base_url=...)`)"
    ),
    "tinker.RestClient.__init__": ("pytrio's is built by the SDK: `service.create_rest_client()`"),
    "tinker.ServiceClient.create_rest_client": (
        "Tinker 0.38 deprecates it for `tinker.RestClient()`; on pytrio keep "
        "`service.create_rest_client()`"
    ),
    "tinker.Checkpoint.tinker_path": "`checkpoint.path`",
    "tinker.ParsedCheckpointTinkerPath": (
        "no parser on pytrio: keep the `path` a save returns and the run's "
        "`training_client.training_run_cuid`, and never build a `tinker://` path (pytrio 0.2.9 "
        "does not fix the form; trio-local's are "
        "`trio://<run>/weights/<name>` and `trio://<run>/sampler_weights/<name>`)"
    ),
    "tinker.RestClient.delete_checkpoint_from_tinker_path": (
        "`rest.delete_checkpoint(training_run_id, checkpoint_id)`, ids from `list_checkpoints`"
    ),
    "tinker.TrainingClient.get_info": (
        "no equivalent; the run's id is `training_client.training_run_cuid`, its LoRA settings "
        "`training_client.lora`"
    ),
    "tinker.TinkerError": "`trio.PyTrioError` (every SDK and service error; also catch ValueError)",
    "tinker.APIError": "`trio.PyTrioError`, with `.code`, `.hint` and `.retryable`",
    "metric:loss:sum": '`metrics["loss_sum"]` (also `loss_mean` and `token_count`)',
    "loss:gspo": "no built-in equivalent: write it with `forward_backward_custom`",
    "loss:stable_reinforce": "no built-in equivalent: write it with `forward_backward_custom`",
    "loss:custom": "`forward_backward_custom(data, loss_fn)` runs a torch loss locally",
}


@dataclass(frozen=True)
class LintGap:
    """A difference that ported code can hit and trio-lint does not report yet: the page tells
    the reader to look for it, and tests/pytrio_facts/test_porting.py fails once trio-lint
    reports it."""

    pattern: str  # a regex matched against one line of ported code
    advice: str  # Markdown, for the page

    def matches(self, line: str) -> bool:
        return re.search(self.pattern, line) is not None


LINT_GAPS: tuple[LintGap, ...] = (
    LintGap(
        r'metrics\["surrogate_loss:sum"\]',
        '`metrics["surrogate_loss:sum"]` of a `forward_backward_custom` result: on pytrio '
        "that sum is `loss_sum` (the linear surrogate the service trains on), and Tinker's "
        "`loss:sum` there (your own loss) exists only if your loss function returns it in its "
        "metrics dict; so `--fix`'s `loss_sum` for a custom-loss result reads the surrogate",
    ),
    LintGap(
        r"rest\.\w+\(.*\.model_id\b",
        "`training_client.model_id` passed to a RestClient call: the run's id on Tinker, the "
        "base model's name on pytrio (no such run); pass "
        "`training_client.training_run_cuid`",
    ),
    LintGap(
        r"await rest\.\w+\(",
        "`await rest.list_checkpoints(...)` and the other RestClient sync calls: awaitable "
        "`APIFuture`s on Tinker, `concurrent.futures.Future`s on pytrio (`TypeError` when "
        "awaited); use `await rest.list_checkpoints_async(...)`",
    ),
)


@dataclass(frozen=True)
class SameName:
    """A member both SDKs have under one name with a different meaning: no table row shows it
    (the names agree), so the page says it, and tests/pytrio_facts/test_porting.py checks that both
    generated API files still have the member."""

    client: str  # the class, as in CLIENTS
    member: str
    advice: str  # Markdown, for the page


SAME_NAME: tuple[SameName, ...] = (
    SameName(
        "TrainingClient",
        "model_id",
        "Tinker's `training_client.model_id` is the training run's id, the argument of its "
        "RestClient calls; pytrio's is the base model's name (`Qwen/Qwen3-4B-Instruct-2507`), and "
        "the run's id is `training_client.training_run_cuid`: "
        "`rest.list_checkpoints(training_client.training_run_cuid)`. Passed to a RestClient call, "
        "pytrio's `model_id` names no run (trio-local: `control.request_failed`, HTTP 404)",
    ),
)


def same_name_on_both(entry: SameName) -> bool:
    """Both SDKs, at the releases the page names, have `entry.member` on `entry.client`."""
    tinker_cls = _class(_tinker(f"tinker.{entry.client}"))
    pytrio_cls = _class(_pytrio(f"pytrio.{entry.client}"))
    return all(cls is not None and entry.member in _members(cls, client=False)
               for cls in (tinker_cls, pytrio_cls))  # fmt: skip


@dataclass(frozen=True)
class Row:
    key: str  # what NOTES are keyed by
    tinker: str  # Markdown: what Tinker has
    pytrio: str  # Markdown: what pytrio has ("none")
    note: str = ""


@dataclass(frozen=True)
class Section:
    title: str
    rows: tuple[Row, ...]


@cache
def tinker_raw() -> dict[str, Any]:
    raw: dict[str, Any] = json.loads(TINKER_DATA.read_text(encoding="utf-8"))
    return raw


@cache
def tinker_data() -> ApiData:
    return ApiData(tinker_raw())


def tinker_release() -> str:
    return tinker_data().versions[-1]


def pytrio_release() -> str:
    return sdk.SDK_VERSION


def _tinker(qualname: str) -> Symbol | None:
    return tinker_data().symbol(qualname, tinker_release())


def _pytrio(qualname: str) -> Symbol | None:
    return api_data().symbol(qualname, pytrio_release())


def _names(symbol: object) -> dict[str, str]:
    return symbol.names if isinstance(symbol, Module) else {}


def _find_pytrio(name: str) -> str | None:
    """`trio.X` or `trio.types.X` for a public pytrio name, else None."""
    if name in _names(_pytrio("pytrio")):
        return f"trio.{name}"
    if name in _names(_pytrio("pytrio.types")):
        return f"trio.types.{name}"
    return None


def _class(data_symbol: object) -> Class | None:
    return data_symbol if isinstance(data_symbol, Class) else None


def signature(function: Function) -> str:
    parts: list[str] = []
    star = False
    for param in function.params:
        if param.kind == "var_positional":
            parts.append(f"*{param.name}")
            star = True
        elif param.kind == "var_keyword":
            parts.append(f"**{param.name}")
        else:
            if param.kind == "keyword_only" and not star:
                parts.append("*")
                star = True
            parts.append(param.name + ("=…" if param.has_default else ""))
    return f"({', '.join(parts)})"


def returns(function: Function) -> str:
    """What a caller gets, in the words of the docs."""
    if function.is_async:
        inner = "an `APIFuture`" if function.future == "api" else "the value"
        return f"`await` gives {inner}"
    if function.future == "api":
        return "an `APIFuture`"
    if function.future == "concurrent":
        return "a `concurrent.futures.Future`"
    return "the value"


def _deprecated(key: str) -> bool:
    return key in tinker_raw()["deprecated"]


def _note(key: str, default: str) -> str:
    return NOTES.get(key) or default


def _deprecation(member: str, pytrio_cls: Class) -> str:
    """What Tinker's deprecation of `member` means on pytrio: Tinker 0.38 moves `X_async(...)`
    callers to `await X(...)`, which works on pytrio only where `X` returns an APIFuture."""
    sync = pytrio_cls.methods.get(member.removesuffix("_async"))
    message = next(
        (text for key, text in tinker_raw()["deprecated"].items() if key.endswith(f".{member}")),
        "",
    )
    moved_to_await = re.search(rf"await [\w.]*\b{re.escape(sync_name(member))}\(", message)
    if not member.endswith("_async") or sync is None or not moved_to_await:
        return "deprecated on Tinker"
    if sync.future == "api":
        return f"deprecated on Tinker for `await {sync_name(member)}(...)`, which works on both"
    return (
        f"deprecated on Tinker for `await {sync_name(member)}(...)`, which fails on pytrio "
        f"({sync_name(member)}() returns {returns(sync)}): keep `await {member}(...)`"
    )


def sync_name(member: str) -> str:
    return member.removesuffix("_async")


def names() -> Section:
    """Top-level `tinker.X` names: where pytrio has them (or that it does not)."""
    rows = []
    for name, kind in sorted(_names(_tinker("tinker")).items()):
        if kind == "module" or name in _names(_pytrio("pytrio")):
            continue
        key = f"tinker.{name}"
        found = _find_pytrio(RENAMED_TYPES.get(name, name))
        where = f"`{found}`" if found else "none"
        default = "use it from `trio.types`" if found else "no equivalent on pytrio"
        if not found and name.endswith("Error"):
            default = "catch `trio.PyTrioError` (its `.code` names the cause)"
        if found and name in RENAMED_TYPES:
            default = "renamed"
        rows.append(Row(key, f"`tinker.{name}`", where, _note(key, default)))
    return Section("Names", tuple(rows))


def types_only_in_tinker() -> list[str]:
    """`tinker.types` classes and values that pytrio has under no name."""
    found = []
    for name, kind in sorted(_names(_tinker("tinker.types")).items()):
        if kind == "module" or name in RENAMED_TYPES:
            continue
        if _find_pytrio(name) is None and name not in _names(_tinker("tinker")):
            found.append(name)
    return found


def _members(cls: Class, *, client: bool) -> set[str]:
    # Clients' instance attributes are their plumbing (`holder`, `retry_handler`), not API.
    members = {*cls.methods, *cls.properties, *cls.fields}
    if not client:
        members |= cls.attributes
    return {m for m in members if m != "__init__"}


def _constructor_row(name: str, tinker_cls: Class, pytrio_cls: Class) -> Row | None:
    """`tinker.X(...)` against `trio.X(...)`, for the clients a script constructs itself."""
    old, new = tinker_cls.methods.get("__init__"), pytrio_cls.methods.get("__init__")
    if name not in CONSTRUCTED or old is None or new is None:
        return None
    key = f"tinker.{name}.__init__"
    public = {k for k in old.keywords if not k.startswith("_")}
    gone = sorted(public - new.keywords)
    default = "no " + ", ".join(f"`{k}=`" for k in gone) + " on pytrio" if gone else ""
    note = "; ".join(part for part in (NOTES.get(key, ""), default) if part)
    return Row(key, f"`tinker.{name}{signature(old)}`", f"`trio.{name}{signature(new)}`", note)


def _method_rows(name: str) -> list[Row]:
    tinker_cls = _class(_tinker(f"tinker.{name}"))
    found = _find_pytrio(name)
    pytrio_cls = _class(_pytrio(found.replace("trio.", "pytrio.", 1))) if found else None
    if tinker_cls is None or pytrio_cls is None:
        return []
    constructor = _constructor_row(name, tinker_cls, pytrio_cls)
    rows = [constructor] if constructor is not None else []
    for member in sorted(_members(tinker_cls, client=True) | _members(pytrio_cls, client=True)):
        key = f"tinker.{name}.{member}"
        old = tinker_cls.methods.get(member)
        new = pytrio_cls.methods.get(member)
        in_tinker = member in _members(tinker_cls, client=True)
        in_pytrio = member in _members(pytrio_cls, client=True)
        if in_tinker and not in_pytrio:
            shown = f"`{member}{signature(old)}`" if old else f"`.{member}`"
            rows.append(Row(key, shown, "none", _note(key, "no equivalent on pytrio")))
            continue
        if in_pytrio and not in_tinker:
            shown = f"`{member}{signature(new)}`" if new else f"`.{member}`"
            rows.append(Row(key, "none", shown, _note(key, "pytrio only")))
            continue
        if old is None or new is None:
            continue
        differences = []
        gone = sorted(old.keywords - new.keywords)
        if gone:
            differences.append("no " + ", ".join(f"`{k}=`" for k in gone) + " on pytrio")
        added = sorted(new.keywords - old.keywords)
        if added:
            differences.append("pytrio adds " + ", ".join(f"`{k}=`" for k in added))
        required_old = {p.name for p in old.params if not p.has_default}
        required_new = {p.name for p in new.params if not p.has_default}
        optional = sorted((required_old - required_new) & new.keywords)
        if optional:
            differences.append("optional on pytrio: " + ", ".join(f"`{k}`" for k in optional))
        required = sorted((required_new - required_old) & old.keywords)
        if required:
            differences.append("required on pytrio: " + ", ".join(f"`{k}`" for k in required))
        results = []
        if returns(old) != returns(new):
            results.append(f"Tinker returns {returns(old)}, pytrio {returns(new)}")
            if old.future == "api" and new.future == "concurrent":
                results.append(f"not awaitable on pytrio: `await ...{member}_async(...)`")
        if _deprecated(key):
            differences.append(_deprecation(member, pytrio_cls))
        if differences or results:
            # A note explains the result; the keyword differences stay listed beside it.
            if key in NOTES and "deprecat" in NOTES[key]:
                differences = [d for d in differences if not d.startswith("deprecated on Tinker")]
            note = "; ".join([NOTES[key], *differences] if key in NOTES else results + differences)
            rows.append(
                Row(
                    key,
                    f"`{member}{signature(old)}` → {returns(old)}",
                    f"`{member}{signature(new)}` → {returns(new)}",
                    note,
                )
            )
    return rows


def methods() -> list[Section]:
    return [Section(f"`{name}`", tuple(_method_rows(name))) for name in CLIENTS]


def _type_pairs() -> list[tuple[str, str, str]]:
    """(name, Tinker qualname, pytrio qualname) of the types both SDKs define."""
    pairs = []
    seen = set()
    for module in ("tinker", "tinker.types"):
        for name, kind in sorted(_names(_tinker(module)).items()):
            if kind != "class" or name in CLIENTS or name in seen:
                continue
            target = RENAMED_TYPES.get(name, name)
            found = _find_pytrio(target)
            if found is None:
                continue
            pytrio_name = found.replace("trio.", "pytrio.", 1)
            if _class(_pytrio(pytrio_name)) is None:
                continue
            seen.add(name)
            pairs.append((name, f"{module}.{name}", pytrio_name))
    return pairs


def type_members() -> Section:
    """Fields, properties and methods of shared types that only one SDK has."""
    rows = []
    for name, tinker_name, pytrio_name in _type_pairs():
        old = _class(_tinker(tinker_name))
        new = _class(_pytrio(pytrio_name))
        assert old is not None and new is not None
        only_tinker = sorted(_members(old, client=False) - _members(new, client=False))
        only_pytrio = sorted(_members(new, client=False) - _members(old, client=False))
        title = name if name not in RENAMED_TYPES else f"{name} → {RENAMED_TYPES[name]}"
        for member in only_tinker:
            key = f"tinker.{name}.{member}"
            rows.append(Row(key, f"`{title}.{member}`", "none", _note(key, "not on pytrio")))
        if only_pytrio:
            shown = ", ".join(f"`{m}`" for m in only_pytrio)
            rows.append(Row(f"pytrio.{name}", f"`{title}`", shown, "pytrio only"))
    return Section("Result and input types", tuple(rows))


def defaults() -> Section:
    """Defaults a port keeps silently: AdamParams, SamplingParams, create_lora_training_client."""
    tinker_defaults = tinker_raw()["facts"]["defaults"]
    ours = {
        "AdamParams": {f.name: f.default for f in sdk.ADAM_PARAMS},
        "SamplingParams": {f.name: f.default for f in sdk.SAMPLING_PARAMS},
        "ServiceClient": {
            f"create_lora_training_client.{k}": v for k, v in sdk.LORA_DEFAULTS.items()
        },
    }
    rows = []
    for name, values in ours.items():
        theirs = tinker_defaults[f"tinker.{name}"]
        for field_name, value in values.items():
            key = f"tinker.{name}.{field_name}"
            if field_name not in theirs:
                rows.append(Row(key, "none", f"`{field_name}={value!r}`", "pytrio only"))
            elif theirs[field_name] != value:
                rows.append(
                    Row(key, f"`{theirs[field_name]!r}`", f"`{value!r}`", "differs: pass it")
                )
    return Section("Defaults", tuple(rows))


def same_defaults() -> list[str]:
    """`Type.field=value` pairs both SDKs default alike (said once, so nobody re-checks)."""
    tinker_defaults = tinker_raw()["facts"]["defaults"]
    same = []
    for name, facts in (("AdamParams", sdk.ADAM_PARAMS), ("SamplingParams", sdk.SAMPLING_PARAMS)):
        for fact in facts:
            if tinker_defaults[f"tinker.{name}"].get(fact.name, object()) == fact.default:
                same.append(f"{name}({fact.name}={fact.default!r})")
    lora = tinker_defaults["tinker.ServiceClient"]
    for keyword, value in sdk.LORA_DEFAULTS.items():
        if lora.get(f"create_lora_training_client.{keyword}", object()) == value:
            same.append(f"create_lora_training_client({keyword}={value!r})")
    return same


def metric_keys() -> Section:
    keys = tinker_raw()["facts"]["metric_keys"]
    rows = []
    for key, module in keys.items():
        if key in sdk.METRIC_KEYS:
            continue
        row_key = f"metric:{key}"
        source = module.replace(".", "/") + ".py"
        rows.append(
            Row(
                row_key,
                f'`metrics["{key}"]` (`{source}`)',
                "none",
                _note(row_key, "pytrio never produces it"),
            )
        )
    produced = ", ".join(f"`{k}`" for k in sdk.METRIC_KEYS)
    rows.append(Row("pytrio.metrics", "none", produced, "the only keys pytrio's metrics have"))
    return Section("Metric keys", tuple(rows))


def losses() -> Section:
    rows = []
    for name in tinker_raw()["facts"]["loss_names"]:
        if name in sdk.LOSS_NAMES:
            continue
        key = f"loss:{name}"
        rows.append(Row(key, f'`loss_fn="{name}"`', "none", _note(key, "no built-in equivalent")))
    return Section("Losses", tuple(rows))


def shared_losses() -> list[str]:
    return [n for n in tinker_raw()["facts"]["loss_names"] if n in sdk.LOSS_NAMES]


def datum_input_keys() -> list[str]:
    """`loss_fn_inputs` keys Tinker's Datum knows besides the ones pytrio's losses read."""
    known = {name for loss in sdk.LOSSES for name in (*loss.required_inputs, "weights")}
    return [k for k in tinker_raw()["facts"]["datum_input_keys"] if k not in known]


def deprecated_async() -> list[str]:
    """Tinker's `TrainingClient.*_async` methods marked deprecated (they return an APIFuture)."""
    prefix = "tinker.TrainingClient."
    return sorted(
        key.removeprefix(prefix)
        for key in tinker_raw()["deprecated"]
        if key.startswith(prefix) and key.endswith("_async")
    )


def client_futures() -> list[str]:
    """`Class.method` that give a future of a client on Tinker and the client on pytrio."""
    found = []
    for name in CLIENTS:
        old, new = _class(_tinker(f"tinker.{name}")), _class(_pytrio(f"pytrio.{name}"))
        if old is None or new is None:
            continue
        for member, function in old.methods.items():
            ours = new.methods.get(member)
            if function.is_async or function.future != "api" or ours is None:
                continue
            if ours.future is None and not ours.is_async and "Client" in str(ours.returns):
                found.append(f"{name}.{member}")
    return sorted(found)


def all_rows() -> list[Row]:
    sections = [names(), *methods(), type_members(), defaults(), metric_keys(), losses()]
    return [row for section in sections for row in section.rows]
