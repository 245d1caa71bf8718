"""PTR401 checkpoint-path-as-local-file: a checkpoint's `.path` opened or loaded from disk."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import sdk_line
from trio_lint.rules.base import PYTRIO, Invalid, LooksAt, Rule, Valid
from trio_lint.semantics.receivers import Kind

# Callables that read a local file or directory from their first argument (dotted name suffixes).
_LOCAL_FILE_CALLS = frozenset(
    {
        "open",
        "io.open",
        "Path",
        "pathlib.Path",
        "torch.load",
        "load_file",
        "safetensors.torch.load_file",
        "safe_open",
        "safetensors.safe_open",
        "np.load",
        "numpy.load",
        "json.load",
        "shutil.copy",
        "shutil.copyfile",
        "shutil.copytree",
        "shutil.move",
        "os.listdir",
        "os.stat",
        "os.remove",
        "os.scandir",
        "from_pretrained",
    }
)


_OS_PATH_FS = frozenset(
    {
        "exists",
        "lexists",
        "isfile",
        "isdir",
        "islink",
        "getsize",
        "getmtime",
        "getatime",
        "getctime",
        "samefile",
        "realpath",
    }
)


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value)
        return f"{base}.{expr.attr}" if base is not None else expr.attr
    return None


def _is_local_file_call(func: ast.expr) -> bool:
    dotted = _dotted(func)
    if dotted is None:
        return False
    if dotted.startswith("os.path."):
        # join/basename/dirname only build strings; these read the file system.
        return dotted.removeprefix("os.path.") in _OS_PATH_FS
    if dotted in _LOCAL_FILE_CALLS:
        return True
    return dotted.rsplit(".", 1)[-1] in {"from_pretrained", "load_file", "safe_open"}


class CheckpointPathAsLocalFile(Rule):
    code = "PTR401"
    sdks = PYTRIO  # its facts are PyTRIO's checkpoint URIs
    name = "checkpoint-path-as-local-file"
    looks_at = LooksAt(
        calls=frozenset(
            {*(name.rsplit(".", 1)[-1] for name in _LOCAL_FILE_CALLS), *_OS_PATH_FS}
            | {"from_pretrained", "load_file", "safe_open"}
        )
    )
    message = "`{expr}` is a remote checkpoint URI, not a local file: {remedy}"
    severity = Severity.ERROR
    doc = """
## What it does
Flags a checkpoint path returned by PyTRIO (`save_state(...).result().path`,
`save_weights_for_sampler(...).result().path`, a REST `Checkpoint.path`) passed to something that
reads the local file system: `open`, `pathlib.Path`, `os.path.*`, `os.listdir`, `shutil.*`,
`torch.load`, `safetensors` loaders, `*.from_pretrained`.

## Why is this bad?
The weights live on the PyTRIO service; `.path` is the remote checkpoint URI. No local file by that name
exists, so the code fails with `FileNotFoundError`, or, with `os.path.exists`, silently takes the
"not saved" branch. Use the path where the SDK expects it (`create_sampling_client(model_path=...)`,
`create_training_client_from_state(path)`), or download the files first with
`RestClient.download_checkpoint(checkpoint_id, destination)` (0.2).

## Fix safety
No fix: where the files should go is the author's decision.

## References
- pytrio 0.2.9: `pytrio.types.SaveWeightsForSamplerResponse`, `pytrio.RestClient.download_checkpoint`
"""
    evidence = """
- `path` of a save result is the URI where the service saved it
  (`029:types/checkpoint/save_weights_response.py:12,18`,
  `029:types/checkpoint/save_weights_for_sampler_response.py:12,18`); `Checkpoint.path` is the
  resource URI used to resume or sample (`029:types/rest.py:35,44`).
- Where the SDK takes it: `create_sampling_client(model_path=)`
  (`029:client/service.py:584-588`), `create_training_client_from_state(path)`
  (`029:client/service.py:697-701`); to get files: `download_checkpoint(checkpoint_id,
  destination_path)` (`029:client/rest.py:325-348`).
- A missing path: https://docs.python.org/3/library/exceptions.html#FileNotFoundError,
  https://docs.python.org/3/library/os.path.html#os.path.exists (False).
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "saved = train.save_weights_for_sampler('final').result()\n"
            "sampler = train.create_sampling_client(model_path=saved.path)\n"
            "print(f'saved to {saved.path}')\n"
        ),
        Valid(
            "import pytrio as trio\nimport torch\nfrom pathlib import Path\n"
            "ckpt = Path('runs/last.pt')\n"
            "state = torch.load(ckpt.path if hasattr(ckpt, 'path') else ckpt)\n"
            "open(args.path).read()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "done = rest.download_checkpoint(ckpt_id, 'out/').result()\n"
            "open('out/adapter_config.json').read()\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\nimport torch\n"
            "saved = train.save_weights_for_sampler('final').result()\n"
            "state = torch.load(saved.path)\n",
            line=4,
        ),
        Invalid(
            "import os\nimport pytrio as trio\n"
            "def resume(train: trio.TrainingClient):\n"
            "    path = train.save_state('step-100').result().path\n"
            "    if os.path.exists(path):\n"
            "        print('saved')\n",
            line=5,
        ),
        Invalid(
            "import pytrio as trio\nfrom pathlib import Path\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "for ckpt in rest.list_checkpoints(run_id).result().checkpoints:\n"
            "    size = Path(ckpt.path).stat().st_size\n",
            line=5,
        ),
        Invalid(
            "import pytrio as trio\nfrom peft import PeftModel\n"
            "saved = train.save_weights_for_sampler('final').result()\n"
            "model = PeftModel.from_pretrained(base, saved.path)\n",
            message_contains="download_checkpoint",
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        if not _is_local_file_call(node.func):
            return
        for arg in node.args[:2]:
            if self._is_checkpoint_path(arg):
                if sdk_line(self.ctx) == "0.1":
                    remedy = "pass it to `create_sampling_client(model_path=...)` or use the REST "
                    remedy += "archive URL (`get_archive_url`) to download it"
                else:
                    remedy = (
                        "pass it to `create_sampling_client(model_path=...)`, or download the "
                        "files with `rest.download_checkpoint(checkpoint_id, dest)` first"
                    )
                self.report(arg, self.message.format(expr=ast.unparse(arg), remedy=remedy))
                return

    def _is_checkpoint_path(self, expr: ast.expr) -> bool:
        typ = self.model.type_of(expr)
        if typ is not None and typ.kind is Kind.CHECKPOINT_PATH:
            return True
        if isinstance(expr, ast.JoinedStr):
            return any(
                isinstance(part, ast.FormattedValue) and self._is_checkpoint_path(part.value)
                for part in expr.values[:1]
            )
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Div):
            return self._is_checkpoint_path(expr.left)
        if isinstance(expr, ast.Call) and _dotted(expr.func) == "os.path.join" and expr.args:
            return self._is_checkpoint_path(expr.args[0])
        return False
