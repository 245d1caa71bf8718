"""PTR002 internal-import: importing from SDK modules that are not its public API."""

from __future__ import annotations

import ast
import importlib.util
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from pytrio_facts.api import public_names, removed_top_level
from pytrio_facts.api_model import api_data
from pytrio_facts.versions import RENAMED_TOP_LEVEL
from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import sdk_line
from trio_lint.rules.base import Invalid, LooksAt, Rule, SdkValues, Valid, edit, safe_fix
from trio_lint.settings.target_version import installed_version

if TYPE_CHECKING:
    import libcst as cst

_PUBLIC = {"pytrio", "pytrio.types"}
# Internal subpackages sometimes reached as attributes of the module (`trio.config.settings`).
_INTERNAL_ATTRIBUTES = frozenset({"config", "lib", "_utils", "client", "transport", "runtime"})


@cache
def _installed_sdk() -> tuple[Path, str] | None:
    """(package directory, version) of the installed pytrio, found without importing it."""
    spec = importlib.util.find_spec("pytrio")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))), installed_version() or ""


@cache
def _configure_takes_api_key(release: str) -> bool:
    """Whether `trio.configure(api_key=...)` exists on `release` (read from the wheels); True for
    a release the facts do not know, as for the newest."""
    data = api_data()
    if release not in data.versions:
        return True
    return data.present("pytrio.configure", "api_key", "keyword")[data.index(release)]


@cache
def _module_is_installed(module: str) -> bool:
    found = _installed_sdk()
    if found is None:
        return False
    path = found[0].joinpath(*module.split(".")[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _set_module(dotted: str):
    def transform(node: cst.CSTNode) -> cst.CSTNode:
        import libcst as cst

        assert isinstance(node, cst.ImportFrom)
        return node.with_changes(module=cst.parse_expression(dotted))

    return transform


class InternalImport(Rule):
    code = "PTR002"
    name = "internal-import"
    message = "`{module}` is not public PyTRIO API{detail}"
    severity = Severity.ERROR
    looks_at = LooksAt(receivers=SdkValues(symbols=True, kinds=frozenset()))
    pytrio_only = True
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags imports from PyTRIO's internal modules (`pytrio.lib.*`, `pytrio._utils`, `pytrio.config`,
`pytrio.client.*`, `pytrio.transport.*`, `pytrio.types.forward.*`, ...), the same internals
reached as attributes (`trio.config.settings.api_key = ...`), and the 0.1 names that 0.2 removed
(`SampleInput`, `ServiceParams`). PyTRIO-only: Tinker's module layout is its own. The public
homes are `pytrio`, `pytrio.types` and, on 0.2, `pytrio.errors.*` (the only home of
`ValidationError`, `AuthError`, ...). An import that works on the target SDK but names a public
object by its internal module (`from pytrio.types.future.api_future import APIFuture`) is a
convention finding; a module the target SDK does not have is an error.

## Why is this bad?
The internal layout changed completely between 0.1.13 and 0.2.9, so such imports break on
upgrade: `pytrio.lib.*` and `pytrio._utils` are gone in 0.2.0 (`ModuleNotFoundError`);
`pytrio.config.settings` is still there in 0.2.0 and gone from 0.2.1 on (`ImportError` or
`AttributeError`), and `pytrio.config` itself is a package with other contents from 0.2.3. The public names are the same objects
on both lines, and only they are kept stable between releases. Set the API key with
`trio login`, or from 0.2.8 with `trio.configure(api_key=...)`.

## Fix safety
Safe when every imported name is exported by `pytrio` (or `pytrio.types`): the import then binds
the same object. `SampleInput` (0.1's alias of `Datum`) and module imports have no fix.

## References
- pytrio 0.2.9: `pytrio.TrainingClient`, `pytrio.types` (the public exports)
- pytrio 0.1.13: `pytrio.lib` (removed in pytrio 0.2.0)
"""
    evidence = """
- 0.1.13 re-exports its clients from `pytrio.lib.*` and exports the 0.1 names `SampleInput`,
  `ServiceParams` (`013:__init__.py:1-27`); `SampleInput` is an alias of `Datum`
  (`013:types/forward/sample_input.py:1-3`); `pytrio.config.settings` is a module global
  (`013:config.py:60`).
- 0.2.0 has no `lib/` or `_utils/`: its `pytrio` imports from `client.*`
  (`020:__init__.py:1-11`), without `SampleInput`/`ServiceParams`. 0.2.9 likewise
  (`029:__init__.py:1-15`).
- `pytrio.config.settings` in 0.2: 0.2.0 keeps the module `config.py` with
  `settings = Settings()` (`020:config.py:38,130`); 0.2.1 and 0.2.2 keep `config.py` but the
  global is `configuration = Configuration()` and there is no `settings`
  (`021:config.py:85,227`, `022:config.py:233`); from 0.2.3 `pytrio.config` is a package
  (`023:config/config.py`, `pytrio` imports `configure` from `.config.config`:
  `023:__init__.py:6`), in 0.2.9 with an empty `__init__` (`029:config/__init__.py`); the
  settings are set with `configure` (`029:config/config.py:562`).
- `configure` takes `api_key` from 0.2.8 (`028:config/config.py:553-555`); 0.2.0 to 0.2.7 do not
  (`020:config.py:197`, `027:config/config.py:573`), and `trio login` is the way to store the key
  there (`020:cli/main.py:15`). The generated facts say the same:
  `pytrio_facts/api_versions.json` (`pytrio.configure`, keyword `api_key`).
- 0.2 error classes are public only in `pytrio.errors.*` (`029:errors/base.py:120`,
  `029:errors/auth.py:6`); `pytrio` exports `PyTrioError` alone (`029:__init__.py:7`).
- Public re-exports the fix points to: `029:types/__init__.py:7,16,34` (`Datum`, `APIFuture`,
  `SampleResponse` in `pytrio.types`), `029:__init__.py:5,12` (`TrainingClient`, `Datum` in
  `pytrio`).
"""
    VALID = (
        Valid("import pytrio as trio\nTrainingClient = trio.TrainingClient\n"),
        Valid("import pytrio as trio\nfrom pytrio.types import APIFuture, SampleResponse\n"),
        Valid("import pytrio as trio\nfrom pytrio.errors.base import ValidationError\n"),
        Valid(
            "import pytrio as trio\nfrom mylib.pytrio_utils import helper\nimport trio.lowlevel\n"
        ),
        Valid(
            "import tinker\nfrom tinker.lib.public_interfaces import TrainingClient\n",
            config={"sdk-modules": ["pytrio", "tinker"]},
        ),
    )
    INVALID = (
        Invalid(
            "from pytrio.lib.training_client import TrainingClient\n",
            fixed="from pytrio import TrainingClient\n",
            line=1,
        ),
        Invalid(
            "import pytrio as trio\nfrom pytrio.types.forward.datum import Datum as D\n",
            fixed="import pytrio as trio\nfrom pytrio import Datum as D\n",
        ),
        Invalid(
            "from pytrio.types.sample.sample_response import SampleResponse\n",
            fixed="from pytrio.types import SampleResponse\n",
        ),
        Invalid(
            "import pytrio as trio\nfrom pytrio.types.future.api_future import APIFuture\n",
            fixed="import pytrio as trio\nfrom pytrio.types import APIFuture\n",
            message_contains="public as `pytrio.types.APIFuture`",
        ),
        Invalid(
            "from pytrio import SampleInput, ModelInput\n",
            fixed=None,
            message_contains="Datum",
        ),
        Invalid("import pytrio._utils._socket\n", fixed=None),
        Invalid(
            "import os\nimport pytrio as trio\ntrio.config.settings.api_key = os.environ['KEY']\n",
            fixed=None,
            count=1,
            message_contains="trio.configure",
        ),
        Invalid(
            "import pytrio as trio\nsettings = trio.config.settings\nconfig = trio.config\n",
            fixed=None,
            count=2,
            message_contains="trio.configure",
        ),
        # Before 0.2.8 `configure` has no `api_key`: only `trio login` stores the key.
        Invalid(
            "import os\nimport pytrio as trio\ntrio.config.settings.api_key = os.environ['KEY']\n",
            fixed=None,
            count=1,
            message_contains="`trio.configure` takes `api_key=` from 0.2.8",
            config={"target-version": "0.2.0"},
        ),
        # Patching the internal module an aliased import bound is that import's finding, once.
        Invalid(
            "try:\n"
            "    import pytrio._utils as pytrio_utils\n"
            "    import pytrio.lib.training_client as training_client_module\n"
            "    pytrio_utils.get_tokenizer = load\n"
            "    training_client_module.get_tokenizer = load\n"
            "except Exception:\n"
            "    pass\n",
            fixed=None,
            line=2,
            count=2,
        ),
        Invalid(
            "import pytrio\nimport pytrio.lib.training_client\n"
            "pytrio.lib.training_client.get_tokenizer = load\npytrio.config.settings.x = 1\n",
            fixed=None,
            line=2,
            count=2,
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._seen: set[int] = set()
        # Local name -> internal modules a reported import bound it to: uses of those modules
        # through that name are the same finding again, so `finish` drops them.
        self._reported: dict[str, set[str]] = {}
        self._uses: list[tuple[ast.Attribute, str, str, str]] = []  # (node, root, qualname, hint)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        module = node.module
        root = module.partition(".")[0]
        if root != "pytrio":
            return
        names = [alias.name for alias in node.names]
        release = str(self.ctx.sdk_version)
        if module == "pytrio":
            # Names an earlier release exported and the target does not (read from the wheels).
            removed = removed_top_level(release)
            for name in (n for n in names if n in removed):
                hint = RENAMED_TOP_LEVEL.get(name)
                gone = removed[name]
                detail = (
                    f": `{name}` was removed in {gone}; use `{hint}`"
                    if hint
                    else f": `{name}` was removed in {gone}; pass the arguments to the client"
                    " directly"
                )
                self.report(node, self.message.format(module=f"pytrio.{name}", detail=detail))
            return
        if module in _PUBLIC or self._is_errors(module):
            return
        fix = None
        target = None
        if "*" not in names:
            if all(n in public_names("pytrio", release) for n in names):
                target = "pytrio"
            elif all(n in public_names("pytrio.types", release) for n in names):
                target = "pytrio.types"
            else:
                target = None
            if target is not None:
                fix = safe_fix(
                    f"Import from `{target}`", edit(node, "ImportFrom", _set_module(target))
                )
        for alias in node.names:
            if alias.name != "*":
                self._remember(alias.asname or alias.name, f"{module}.{alias.name}")
        if target is not None and self._works_on_target(module):
            # The import runs (the installed SDK has that module); only the spelling is private.
            self.report(
                node,
                f"`{', '.join(names)}` is public as `{target}.{names[0]}`: import it from "
                f"`{target}` (`{module}` is an internal module that may move)",
                fix=fix,
                severity=Severity.CONVENTION,
            )
            return
        self.report(
            node,
            self.message.format(module=module, detail="; import from `pytrio` or `pytrio.types`"),
            fix=fix,
        )

    def _works_on_target(self, module: str) -> bool:
        installed = _installed_sdk()
        if installed is None or not _module_is_installed(module):
            return False
        return installed[1].startswith(sdk_line(self.ctx))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            module = alias.name
            if module.partition(".")[0] != "pytrio" or module in _PUBLIC:
                continue
            if self._is_errors(module):
                continue
            # `import pytrio.lib.x as m` binds `m` to the module; `import pytrio.lib.x` binds
            # `pytrio` and makes `pytrio.lib.x` reachable through it.
            self._remember(alias.asname or "pytrio", module)
            self.report(
                node,
                self.message.format(
                    module=module, detail="; use `import pytrio as trio` and the public names"
                ),
            )

    def _remember(self, local: str, module: str) -> None:
        self._reported.setdefault(local, set()).add(module)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        # `trio.config.settings.api_key = ...`, `trio.lib.training_client.X`: internals reached
        # through the module object. Report the outermost chain once.
        if id(node) in self._seen:
            return
        inner = node.value
        while isinstance(inner, ast.Attribute):
            self._seen.add(id(inner))
            inner = inner.value
        if not isinstance(inner, ast.Name):
            return  # `f().x`, `a[0].x`: only a chain from a name can name a module
        qualname = self.model.qualified_name(node)
        if qualname is None or not qualname.startswith("pytrio."):
            return
        second = qualname.split(".")[1]
        if second not in _INTERNAL_ATTRIBUTES:
            return
        if second != "config":
            hint = "; use the public names of `pytrio`"
        elif sdk_line(self.ctx) == "0.2" and not _configure_takes_api_key(
            str(self.ctx.sdk_version)
        ):
            hint = "; set the key with `trio login` (`trio.configure` takes `api_key=` from 0.2.8)"
        else:
            hint = "; on 0.2 set the key with `trio.configure(api_key=...)` or `trio login`"
        root = inner.id if isinstance(inner, ast.Name) else ""
        self._uses.append((node, root, qualname, hint))

    def finish(self) -> None:
        for node, root, qualname, hint in self._uses:
            modules = self._reported.get(root, ())
            if any(qualname == m or qualname.startswith(f"{m}.") for m in modules):
                continue  # the import that bound `root` to this internal module is reported
            second = qualname.split(".")[1]
            self.report(node, self.message.format(module=f"pytrio.{second}", detail=hint))

    def _is_errors(self, module: str) -> bool:
        return sdk_line(self.ctx) == "0.2" and (
            module == "pytrio.errors" or module.startswith("pytrio.errors.")
        )
