"""Receiver typing (trio_lint/semantics/receivers.py): which names hold PyTRIO clients, futures and
results, and, above all, that torch, Hugging Face and vLLM objects with the same method names never
do."""

from __future__ import annotations

import ast
import textwrap

import pytest

from trio_lint.semantics.binder import build_model as infer
from trio_lint.semantics.receivers import Kind


def types_in(code: str, version: str = "0.2", sdk=("pytrio",)) -> dict[str, str | None]:
    """`expression source` -> str(type) for every `# ?` marked line's last expression."""
    source = textwrap.dedent(code)
    tree = ast.parse(source)
    model = infer(tree, sdk, version)
    wanted = {n for n, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith("# ?")}
    found: dict[str, str | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and node.lineno in wanted:
            typ = model.type_of(node.value)
            found[ast.unparse(node.value)] = str(typ) if typ is not None else None
    return found


def test_constructors_factories_results() -> None:
    found = types_in(
        """
        import pytrio as trio
        svc = trio.ServiceClient()
        train = svc.create_lora_training_client(base_model="m")
        svc  # ?
        train  # ?
        train.forward_backward(batch)  # ?
        train.forward_backward(batch).result()  # ?
        train.forward_backward(batch).result().metrics  # ?
        train.save_state("x").result().path  # ?
        train.create_sampling_client(model_path="p")  # ?
        svc.create_rest_client().list_checkpoints("r")  # ?
        """
    )
    assert found == {
        "svc": "ServiceClient",
        "train": "TrainingClient",
        "train.forward_backward(batch)": "APIFuture[ForwardBackwardOutput]",
        "train.forward_backward(batch).result()": "ForwardBackwardOutput",
        "train.forward_backward(batch).result().metrics": "metrics",
        "train.save_state('x').result().path": "checkpoint path",
        "train.create_sampling_client(model_path='p')": "SamplingClient",
        "svc.create_rest_client().list_checkpoints('r')": (
            "concurrent.futures.Future[CheckpointsListResponse]"
        ),
    }


@pytest.mark.parametrize(
    "code",
    [
        # torch: nn.Module.forward, Distribution.sample, optimizer.step, Future.result
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.forward(x)  # ?\n",
        "import torch\nd = torch.distributions.Normal(0, 1)\nd.sample()  # ?\n",
        "import torch\nfut = torch.futures.Future()\nfut.result()  # ?\n",
        # Hugging Face: generate, Trainer.save_state, accelerate's save_state
        "from transformers import Trainer\ntrainer = Trainer(model)\ntrainer.save_state()  # ?\n",
        "from accelerate import Accelerator\nacc = Accelerator()\nacc.save_state('out')  # ?\n",
        "model.generate(input_ids, max_new_tokens=8)  # ?\n",
        # vLLM: LLM.generate / SamplingParams of its own
        "from vllm import LLM, SamplingParams\n"
        "llm = LLM('m')\nllm.generate(p, SamplingParams())  # ?\n",
        # concurrent.futures: executor futures are not PyTRIO's
        "from concurrent.futures import ThreadPoolExecutor\n"
        "pool = ThreadPoolExecutor()\npool.submit(f).result()  # ?\n",
        # a local class that happens to be called ServiceClient
        "class ServiceClient: ...\nsvc = ServiceClient()\nsvc  # ?\n",
    ],
)
def test_other_libraries_are_never_typed(code: str) -> None:
    found = types_in("import pytrio as trio\n" + code)
    assert list(found.values()) == [None], found


def test_the_python_trio_library_is_not_pytrio() -> None:
    found = types_in("import trio\nsvc = trio.ServiceClient()\nsvc  # ?\n")
    assert found == {"svc": None}


def test_aliases_and_from_imports_and_tinker() -> None:
    assert types_in("import pytrio as pt\nsvc = pt.ServiceClient()\nsvc  # ?\n") == {
        "svc": "ServiceClient"
    }
    assert types_in("from pytrio import ServiceClient as SC\nSC()  # ?\n") == {
        "SC()": "ServiceClient"
    }
    tinker = "import tinker\nsvc = tinker.ServiceClient()\nsvc  # ?\n"
    assert types_in(tinker) == {"svc": None}
    assert types_in(tinker, sdk=("pytrio", "tinker")) == {"svc": "ServiceClient"}


def test_annotations_including_strings_and_optional() -> None:
    found = types_in(
        """
        from typing import Optional
        import pytrio as trio
        from pytrio.types import APIFuture, SampleResponse

        def f(a: trio.TrainingClient, b: "trio.SamplingClient", c: Optional[trio.RestClient],
              d: trio.ServiceClient | None, e: APIFuture[SampleResponse], g: int):
            a  # ?
            b  # ?
            c  # ?
            d  # ?
            e  # ?
            g  # ?
        """
    )
    assert found == {
        "a": "TrainingClient",
        "b": "SamplingClient",
        "c": "RestClient",
        "d": "ServiceClient",
        "e": "APIFuture[SampleResponse]",
        "g": None,
    }


def test_flow_sensitive_rebinding() -> None:
    found = types_in(
        """
        import pytrio as trio
        def step(train: trio.TrainingClient, batch):
            out = train.forward_backward(batch)
            out  # ?
            out = out.result()
            out.metrics  # ?
            out = compute(out)
            out  # ?
        """
    )
    assert found == {"out": None, "out.metrics": "metrics"}


def test_first_read_sees_the_future_before_the_rebinding() -> None:
    source = textwrap.dedent(
        """
        import pytrio as trio
        def step(train: trio.TrainingClient, batch):
            out = train.forward_backward(batch)
            out  # ?
        """
    )
    assert types_in(source) == {"out": "APIFuture[ForwardBackwardOutput]"}


def test_functions_see_module_clients_bound_after_them() -> None:
    found = types_in(
        """
        import pytrio as trio

        def step(batch):
            training  # ?
            sampler  # ?

        training = trio.ServiceClient().create_lora_training_client(base_model="m")
        sampler = training.save_weights_and_get_sampling_client()
        sampler = make_other_sampler()
        """
    )
    # `sampler` is bound twice with different types: unknown inside the function.
    assert found == {"training": "TrainingClient", "sampler": None}


def test_self_attributes_across_methods() -> None:
    found = types_in(
        """
        import pytrio as trio
        class Trainer:
            def __init__(self, base_model):
                self.svc = trio.ServiceClient()
                self.train = self.svc.create_lora_training_client(base_model=base_model)
                self.model = load_hf_model(base_model)

            def step(self, batch):
                self.train  # ?
                self.model  # ?
        """
    )
    assert found == {"self.train": "TrainingClient", "self.model": None}


def test_awaits_lists_and_comprehensions() -> None:
    found = types_in(
        """
        import pytrio as trio
        async def run(train: trio.TrainingClient, sampler: trio.SamplingClient, batches, p, sp):
            fut = await train.forward_backward_async(batches[0])
            fut  # ?
            await fut  # ?
            await sampler.sample_async(p, sampling_params=sp)  # ?
            futures = [train.forward_backward(b) for b in batches]
            [f.result() for f in futures]  # ?
            for f in futures:
                f.result()  # ?
        """
    )
    assert found == {
        "fut": "APIFuture[ForwardBackwardOutput]",
        "await fut": "ForwardBackwardOutput",
        "await sampler.sample_async(p, sampling_params=sp)": "SampleResponse",
        "[f.result() for f in futures]": "list[ForwardBackwardOutput]",
        "f.result()": "ForwardBackwardOutput",
    }


def test_version_lines_differ_on_sampling_and_rest() -> None:
    code = """
        import pytrio as trio
        async def run(sampler: trio.SamplingClient, rest: trio.RestClient, p):
            await sampler.sample_async(p)  # ?
            rest.list_training_runs()  # ?
        """
    assert types_in(code, "0.2") == {
        "await sampler.sample_async(p)": "SampleResponse",
        "rest.list_training_runs()": "concurrent.futures.Future[TrainingRunsResponse]",
    }
    assert types_in(code, "0.1") == {
        "await sampler.sample_async(p)": "APIFuture[SampleResponse]",
        "rest.list_training_runs()": "dict (0.1 RestClient)",
    }


def test_distinctive_method_names_type_an_unknown_receiver() -> None:
    found = types_in(
        """
        import pytrio as trio
        def step(tc, batch, adam):
            tc.forward_backward(batch)  # ?
            tc.optim_step(adam)  # ?
            tc.sample(p)  # ?
            tc.forward(batch)  # ?
        """
    )
    assert found == {
        "tc.forward_backward(batch)": "APIFuture[ForwardBackwardOutput]",
        "tc.optim_step(adam)": "APIFuture[OptimStepResponse]",
        "tc.sample(p)": None,
        "tc.forward(batch)": None,
    }
    assert Kind.TRAINING_CLIENT == "TrainingClient"


def test_notebook_cells_inherit_imports_through_the_seed() -> None:
    tree = ast.parse("svc = trio.ServiceClient()\nsvc\n")
    model = infer(tree, ("pytrio",), "0.2", seed={"trio": "pytrio"})
    assert str(model.type_of(tree.body[1].value)) == "ServiceClient"
    assert infer(tree, ("pytrio",), "0.2").type_of(tree.body[1].value) is None


def test_unannotated_parameters_take_the_type_every_call_site_passes() -> None:
    found = types_in(
        """
        import pytrio as trio
        import torch

        def rollout(sampler, prompt, params):
            sampler  # ?
            sampler.sample(prompt, sampling_params=params)  # ?

        def generic(model, x):
            model  # ?

        def step(training, batch):
            training  # ?

        svc = trio.ServiceClient()
        train = svc.create_lora_training_client(base_model="m")
        rollout(train.save_weights_and_get_sampling_client(), p, sp)
        rollout(sampler=svc.create_sampling_client(base_model="m"), prompt=p, params=sp)
        generic(train, 1)
        generic(torch.nn.Linear(2, 2), 2)
        step(train, [])
        step(get_client(), [])
        """
    )
    assert found == {
        "sampler": "SamplingClient",
        "sampler.sample(prompt, sampling_params=params)": "APIFuture[SampleResponse]",
        "model": None,  # a TrainingClient at one call site, a torch module at the other
        "training": None,  # one call site passes something unknown
    }


def test_training_data_and_outputs_hold_tensor_data() -> None:
    found = types_in(
        """
        import numpy as np
        import pytrio as trio
        train = trio.ServiceClient().create_lora_training_client(base_model="m")
        inputs = {"weights": np.ones(3)}
        datum = trio.Datum(model_input=trio.ModelInput.from_ints([1, 2, 3]), loss_fn_inputs=inputs)
        data = [datum]
        fb = train.forward_backward(data, "cross_entropy").result()
        datum  # ?
        datum.loss_fn_inputs  # ?
        datum.loss_fn_inputs["weights"]  # ?
        data[0].loss_fn_inputs["weights"]  # ?
        inputs["weights"]  # ?
        fb.loss_fn_outputs  # ?
        fb.loss_fn_outputs[0]["logprobs"]  # ?
        [o["logprobs"] for o in fb.loss_fn_outputs]  # ?
        [o["logprobs"].to_numpy() for o in fb.loss_fn_outputs]  # ?
        """
    )
    assert found == {
        "datum": "Datum",
        "datum.loss_fn_inputs": "dict[str, TensorData]",
        "datum.loss_fn_inputs['weights']": "TensorData",
        "data[0].loss_fn_inputs['weights']": "TensorData",
        "inputs['weights']": None,  # the user's own dict stays the user's
        "fb.loss_fn_outputs": "list[dict[str, TensorData]]",
        "fb.loss_fn_outputs[0]['logprobs']": "TensorData",
        "[o['logprobs'] for o in fb.loss_fn_outputs]": "list[TensorData]",
        "[o['logprobs'].to_numpy() for o in fb.loss_fn_outputs]": None,
    }


def test_zip_enumerate_targets_and_list_annotations() -> None:
    found = types_in(
        """
        import pytrio as trio
        def step(
            train: trio.TrainingClient, batch: list[trio.Datum], futures: "list[trio.APIFuture]"
        ):
            fb = train.forward_backward(batch, "cross_entropy").result()
            batch  # ?
            futures  # ?
            for datum, out in zip(batch, fb.loss_fn_outputs, strict=True):
                datum  # ?
                out  # ?
            for i, out2 in enumerate(fb.loss_fn_outputs, start=1):
                i  # ?
                out2  # ?
            for a, b in zip(batch, fb.loss_fn_outputs, other):
                a  # ?
            for c, (d, e) in zip(batch, pairs):
                c  # ?
                d  # ?
            first, second = fb.loss_fn_outputs
            first  # ?
        """
    )
    shadowed = types_in(
        """
        import pytrio as trio
        def zip(*a):
            return a
        def step(train: trio.TrainingClient, batch: list[trio.Datum]):
            for x, y in zip(batch, batch):
                x  # ?
        """
    )
    assert shadowed == {"x": None}  # not the builtin
    assert found == {
        "batch": "list[Datum]",
        "futures": "list[APIFuture]",
        "datum": "Datum",
        "out": "dict[str, TensorData]",
        "i": None,
        "out2": "dict[str, TensorData]",
        "a": None,  # three iterables, two targets: nothing is assumed
        "c": "Datum",
        "d": None,
        "first": None,
    }


def test_a_never_called_wrapper_passes_no_evidence_about_a_parameter() -> None:
    head = (
        "import pytrio as trio\n"
        "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
        "def totals(result):\n"
        "    result  # ?\n"
    )
    wrapper = "def wrapper(result):\n    return totals(result)\n"
    tail = "totals(train.forward(data, 'cross_entropy').result())\n"
    assert types_in(head + wrapper + tail) == {"result": "ForwardBackwardOutput"}
    # A wrapper that is called, passed along or decorated still counts (and knows nothing).
    for used in ("wrapper(other)\n", "callbacks = [wrapper]\n", "@register\n"):
        code = head + (used + wrapper if used.startswith("@") else wrapper + used) + tail
        assert types_in(code) == {"result": None}, used


def test_a_parameter_forwarded_to_its_own_function_does_not_recurse() -> None:
    # A recursive call from a closure passes the parameter back as a free name.
    found = types_in(
        """
        import pytrio as trio
        def step(train, depth):
            train  # ?
            train = wrap(train)
            def again():
                return step(train, depth - 1)
            return again
        step(trio.ServiceClient(), 3)
        """
    )
    assert found == {"train": None}


def test_lists_filled_by_append_and_extend_hold_what_every_addition_agrees_on() -> None:
    found = types_in(
        """
        import pytrio as trio
        def build(tokens):
            return trio.Datum(model_input=trio.ModelInput.from_ints(tokens), loss_fn_inputs={})
        def run(rows, raw):
            data = []
            for tokens in rows:
                data.append(build(tokens))
            more = []
            more.extend(data)
            more += [build([1])]
            mixed = []
            mixed.append(build([1]))
            mixed.append(raw)
            replaced = []
            replaced.append(build([1]))
            replaced[0] = raw
            started = [raw]
            started.append(build([1]))
            data  # ?
            data[0].loss_fn_inputs["weights"]  # ?
            more  # ?
            mixed  # ?
            replaced  # ?
            started  # ?
            for d in more:
                d  # ?
        """
    )
    assert found == {
        "data": "list[Datum]",
        "data[0].loss_fn_inputs['weights']": "TensorData",
        "more": "list[Datum]",
        "mixed": None,  # a Datum and something unknown
        "replaced": None,  # an item set by index: not only additions
        "started": None,  # the display's own items decide; `raw` is unknown
        "d": "Datum",
    }


def test_get_values_and_items_of_tensor_dicts() -> None:
    found = types_in(
        """
        import numpy as np
        import pytrio as trio
        def run(train: trio.TrainingClient, datum: trio.Datum):
            out = train.forward(datum, "cross_entropy").result().loss_fn_outputs[0]
            plain = {"weights": [1.0]}
            out.get("logprobs")  # ?
            out.get("logprobs", None)  # ?
            out.get("logprobs", np.zeros(3))  # ?
            out.get(key="logprobs")  # ?
            datum.loss_fn_inputs.values()  # ?
            plain.get("weights")  # ?
            for key, td in out.items():
                key  # ?
                td  # ?
            for pair in out.items():
                pair  # ?
            for name, value in plain.items():
                value  # ?
            for v in datum.loss_fn_inputs.values():
                v  # ?
        """
    )
    assert found == {
        "out.get('logprobs')": "TensorData",
        "out.get('logprobs', None)": "TensorData",
        "out.get('logprobs', np.zeros(3))": None,  # the default may be what comes back
        "out.get(key='logprobs')": None,
        "datum.loss_fn_inputs.values()": "list[TensorData]",
        "plain.get('weights')": None,
        "key": None,
        "td": "TensorData",
        "pair": None,  # a (key, value) tuple
        "value": None,
        "v": "TensorData",
    }


def test_receiver_facts_follow_the_exact_release() -> None:
    """The method tables come from each release's wheel (`api_versions.json`), not from a line:
    releases whose wheels differ give different types for the same code."""
    code = """
        import pytrio as trio
        rest = trio.ServiceClient().create_rest_client()
        sampler = trio.ServiceClient().create_sampling_client(base_model="m")
        rest.download_checkpoint("ckpt", "out")  # ?
        rest.get_checkpoint_download_url("ckpt")  # ?
        sampler.compute_logprobs(prompt)  # ?
        sampler.sample_async(prompt, 1, sp)  # ?
        """
    old, early, late = (types_in(code, version) for version in ("0.1.13", "0.2.2", "0.2.9"))
    # `download_checkpoint` arrived in 0.2.3; the download URL's response type changed in 0.2.9.
    assert early["rest.download_checkpoint('ckpt', 'out')"] is None
    assert late["rest.download_checkpoint('ckpt', 'out')"] == (
        "concurrent.futures.Future[RestResult]"
    )
    assert old["rest.get_checkpoint_download_url('ckpt')"] is None
    # 0.1's logprobs were a dict, and its `sample_async` gave an APIFuture (two awaits).
    assert old["sampler.compute_logprobs(prompt)"] == "APIFuture[dict]"
    assert late["sampler.compute_logprobs(prompt)"] == "APIFuture[list[float | None]]"
    assert old["sampler.sample_async(prompt, 1, sp)"] == "coroutine[APIFuture[SampleResponse]]"
    assert late["sampler.sample_async(prompt, 1, sp)"] == "coroutine[SampleResponse]"


def test_a_line_means_its_newest_release() -> None:
    code = (
        "import pytrio as trio\n"
        "trio.ServiceClient().create_rest_client().download_checkpoint('c', 'o')  # ?\n"
    )
    found = types_in(code, "0.2")
    assert found == types_in(code, "0.2.9") != types_in(code, "0.2.2")


def test_result_attributes_follow_the_release() -> None:
    """A result's attributes are the fields its release's wheel declares: the checkpoint path of
    a listed checkpoint is `tinker_path` up to 0.2.4 and `path` from 0.2.5 on."""
    code = """
        import pytrio as trio
        rest = trio.ServiceClient().create_rest_client()
        ckpt = rest.list_checkpoints("run").result().checkpoints[0]
        ckpt.path  # ?
        ckpt.tinker_path  # ?
        """
    assert types_in(code, "0.2.9") == {"ckpt.path": "checkpoint path", "ckpt.tinker_path": None}
    assert types_in(code, "0.2.4") == {"ckpt.path": None, "ckpt.tinker_path": "checkpoint path"}


def test_a_rules_view_of_the_model_has_only_its_queries() -> None:
    """`ModelView` binds the queries it names; the model's state (tables, caches, `memo`) is not
    reachable through it."""
    from trio_lint.semantics.model import _FILTERED_QUERIES, _VALUE_QUERIES, ModelView

    model = infer(ast.parse("import pytrio as trio\nx = 1\n"), ("pytrio",), "0.2.9")
    view = ModelView(model, pytrio_only=True)
    for name in (*_FILTERED_QUERIES, *_VALUE_QUERIES):
        assert callable(getattr(view, name)), name
    assert view.sdk_alias() == "trio" and view.other_sdk_only is False
    for state in ("memo", "module_scope", "methods", "_names", "events"):
        with pytest.raises(AttributeError):
            getattr(view, state)


def test_calling_an_async_helper_makes_a_coroutine_of_what_it_returns() -> None:
    code = """
        import pytrio as trio
        async def make_fb(tc: trio.TrainingClient, batch):
            return await tc.forward_backward_async(batch)
        async def step(tc: trio.TrainingClient, batch):
            make_fb(tc, batch)  # ?
            fb = await make_fb(tc, batch)
            fb  # ?
        """
    assert types_in(code, "0.2.9") == {
        "make_fb(tc, batch)": "coroutine[APIFuture[ForwardBackwardOutput]]",
        "fb": "APIFuture[ForwardBackwardOutput]",
    }
