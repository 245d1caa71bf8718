"""PTR405 stale-sampler: sampling in a training loop from a sampler made before the loop."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import source_text
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited
from trio_lint.semantics.receivers import Kind

_MAKERS = frozenset(
    {
        "save_weights_and_get_sampling_client",
        "save_weights_and_get_sampling_client_async",
        "create_sampling_client",
        "create_sampling_client_async",
    }
)
_UPDATES = frozenset({"optim_step", "optim_step_async"})
_SAMPLES = frozenset({"sample", "sample_async"})
# A sampler kept on purpose as a fixed reference policy (KL penalties, baselines).
_REFERENCE_WORDS = ("ref", "base", "init", "orig", "frozen", "teacher", "old")
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _unawait(expr: ast.expr) -> ast.expr:
    while isinstance(expr, ast.Await):
        expr = expr.value
    return expr


def _walk_body(nodes: list[ast.stmt]):
    """Every node of these statements, not descending into nested functions or classes."""
    stack: list[ast.AST] = [n for n in nodes if not isinstance(n, _SCOPES)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, _SCOPES))


class StaleSampler(Rule):
    looks_at = LooksAt(calls=_SAMPLES)
    code = "PTR405"
    name = "stale-sampler"
    message = (
        "`{sampler}` samples the weights saved before this loop, but `{trainer}.optim_step` "
        "changes them every iteration: re-create it after each update "
        "(`{sampler} = {trainer}.save_weights_and_get_sampling_client()`)"
    )
    severity = Severity.WARNING
    doc = """
## What it does
Flags `S.sample(...)` inside a loop that also calls `R.optim_step(...)`, when the sampling client
`S` was made from the TrainingClient `R` (`save_weights_and_get_sampling_client()` or
`create_sampling_client(...)`) before the loop and is not re-created inside it. Samplers whose
name says they are a fixed reference (`ref_sampler`, `base_sampler`, `old_policy`...) are left
alone.

## Why is this bad?
A SamplingClient serves the weights that were saved when it was created; later optimizer steps do not reach it. An on-policy RL loop
that keeps sampling from it trains on rollouts of the initial policy, so the importance weights
drift and learning stalls without any error.

## Fix safety
No fix: where to refresh (every step, every k steps) is the author's choice.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.save_weights_and_get_sampling_client`, `pytrio.TrainingClient.create_sampling_client`
"""
    evidence = """
- (`029:client/training.py:1073-1101`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def rl(train: trio.TrainingClient, prompt, params, adam, steps):\n"
            "    for step in range(steps):\n"
            "        sampler = train.save_weights_and_get_sampling_client()\n"
            "        out = sampler.sample(prompt, sampling_params=params).result()\n"
            "        train.optim_step(adam).result()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def rl(train: trio.TrainingClient, prompt, params, adam, steps):\n"
            "    ref_sampler = train.save_weights_and_get_sampling_client()\n"
            "    for step in range(steps):\n"
            "        ref = ref_sampler.sample(prompt, sampling_params=params).result()\n"
            "        train.optim_step(adam).result()\n"
        ),
        Valid(
            "import pytrio as trio\nimport torch\n"
            "sampler = torch.utils.data.RandomSampler(ds)\n"
            "for batch in loader:\n    idx = sampler.sample()\n    optimizer.step()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def evaluate(train: trio.TrainingClient, prompts, params):\n"
            "    sampler = train.save_weights_and_get_sampling_client()\n"
            "    for prompt in prompts:\n"
            "        print(sampler.sample(prompt, sampling_params=params).result())\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "def rl(train: trio.TrainingClient, prompt, params, adam, steps):\n"
            "    sampler = train.save_weights_and_get_sampling_client()\n"
            "    for step in range(steps):\n"
            "        out = sampler.sample(prompt, sampling_params=params).result()\n"
            "        train.forward_backward(make(out), 'importance_sampling').result()\n"
            "        train.optim_step(adam).result()\n",
            line=5,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def rl(train: trio.TrainingClient, prompts, params, adam):\n"
            "    policy = await train.save_weights_and_get_sampling_client_async()\n"
            "    while prompts:\n"
            "        out = await policy.sample_async(prompts.pop(), sampling_params=params)\n"
            "        await (await train.optim_step_async(adam))\n",
            message_contains="`policy`",
        ),
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='m')\n"
            "sampler = train.create_sampling_client(model_path=path)\n"
            "for step in range(10):\n"
            "    train.optim_step(trio.AdamParams()).result()\n"
            "    print(sampler.sample(p, sampling_params=sp).result())\n",
            line=7,
        ),
    )
    reach = limited(
        "helper-return",
        "config-dict",
        "dict-entry-get",
        "gathered-list",
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # A byte check spares the bookkeeping in almost every file.
        self._active = "sampling_client" in ctx.source and "optim_step" in ctx.source
        self._makers: dict[int, dict[str, str]] = {}  # scope -> sampler name -> trainer text
        self._loops: dict[int, list[ast.For | ast.AsyncFor | ast.While]] = {}
        self._open: list[ast.For | ast.AsyncFor | ast.While] = []  # loops the walk is inside
        self._remote: list[tuple[ast.Call, ast.For | ast.AsyncFor | ast.While]] = []

    def _scope(self) -> int:
        stack = self.ctx.function_stack
        return id(stack[-1]) if stack else 0

    def visit_Assign(self, node: ast.Assign) -> None:
        if not self._active or len(node.targets) != 1:
            return
        target, value = node.targets[0], _unawait(node.value)
        if (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr in _MAKERS
        ):
            typ = self.model.type_of(value.func.value)
            if typ is not None and typ.kind is Kind.TRAINING_CLIENT:
                makers = self._makers.setdefault(self._scope(), {})
                makers[target.id] = source_text(value.func.value)

    def visit_For(self, node: ast.For | ast.AsyncFor | ast.While) -> None:
        if self._active:
            self._loops.setdefault(self._scope(), []).append(node)
            self._open.append(node)

    def leave_For(self, node: ast.For | ast.AsyncFor | ast.While) -> None:
        if self._active:
            self._open.pop()

    visit_AsyncFor = visit_While = visit_For
    leave_AsyncFor = leave_While = leave_For

    def visit_Call(self, node: ast.Call) -> None:
        """`x.sample(...)` in a loop of a scope that binds no sampler itself: kept with its
        outermost loop of that scope, for `finish` to follow `x` through the model."""
        if not self._active or not self._open:
            return
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in _SAMPLES:
            return
        scope = self._scope()
        if scope in self._makers or not isinstance(func.value, ast.Name | ast.Attribute):
            return
        outer = next((loop for loop in self._open if loop in self._loops.get(scope, ())), None)
        if outer is not None:
            self._remote.append((node, outer))

    def finish(self) -> None:
        reported: set[int] = set()
        for scope, makers in self._makers.items():
            for loop in self._loops.get(scope, ()):
                self._check_loop(loop, makers, reported)
        # A sampler made elsewhere (a module constant, `self.sampler`, a parameter), sampled in
        # a loop of a scope that makes none: only the loops around such a call are walked.
        for call, outer in self._remote:
            if self._maker_of(call.func.value) is not None:  # type: ignore[attr-defined]  # `_remote` holds `x.sample(...)` calls
                self._check_loop(outer, {}, reported)

    def _maker_of(self, sampler: ast.expr) -> str | None:
        """The training client (as written) a sampler bound elsewhere was made from: a name
        copied from one, `self.sampler` set in another method, a helper's return, a parameter
        given one at its call site (followed through the model)."""
        expr: ast.expr | None = sampler
        for _ in range(6):
            expr = self.model.value_of(expr) if expr is not None else None
            if expr is None:
                return None
            value = _unawait(expr)
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr in _MAKERS
            ):
                typ = self.model.type_of(value.func.value)
                if typ is None or typ.kind is not Kind.TRAINING_CLIENT:
                    return None
                return source_text(value.func.value)
        return None

    def _check_loop(
        self, loop: ast.For | ast.AsyncFor | ast.While, makers: dict[str, str], reported: set[int]
    ) -> None:
        nodes = list(_walk_body(loop.body))
        rebound = {
            source_text(n)
            for n in nodes
            if isinstance(n, ast.Name | ast.Attribute) and isinstance(n.ctx, ast.Store)
        }
        updated = {
            source_text(n.func.value)
            for n in nodes
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in _UPDATES
        }
        for n in nodes:
            if not (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr in _SAMPLES
                and isinstance(n.func.value, ast.Name | ast.Attribute)
            ):
                continue
            name = source_text(n.func.value)
            trainer = makers.get(name) or self._maker_of(n.func.value)
            if trainer is None or trainer not in updated or name in rebound:
                continue
            if any(word in name.lower() for word in _REFERENCE_WORDS) or id(n) in reported:
                continue
            reported.add(id(n))
            self.report(n, self.message.format(sampler=name, trainer=trainer))
