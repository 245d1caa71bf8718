"""AdamW for a run's adapter: torch's own update (`torch.optim.adamw.adamw`, its functional
form) and torch.optim.AdamW's state layout, without the optimizer class.

`torch.optim.Optimizer` imports torch._dynamo (and sympy) on its first parameter group: about
1.5 s of CPU in every service process that trains (torch 2.13), for a class whose step is this
one call. The state dict is the class's (`state` by parameter index: `step`, `exp_avg`,
`exp_avg_sq`; one parameter group with the class's keys), so optimizer state saved by earlier
trio-local versions loads here and the other way round; the tests compare the steps with
torch.optim.AdamW's, bit for bit.
"""

from __future__ import annotations

from typing import Any

# torch.optim.AdamW's defaults and group keys (torch 2.13); the trainer sets lr, betas, eps and
# weight_decay from the SDK's AdamParams before every step.
DEFAULT_GROUP: dict[str, Any] = {
    "lr": 1e-3,
    "betas": (0.9, 0.999),
    "eps": 1e-8,
    "weight_decay": 0.01,
    "amsgrad": False,
    "maximize": False,
    "foreach": None,
    "capturable": False,
    "differentiable": False,
    "fused": None,
    "decoupled_weight_decay": True,
}


class AdamW:
    def __init__(self, params: list[Any], lr: float) -> None:
        self.params = list(params)
        self.param_groups = [{**DEFAULT_GROUP, "lr": lr, "params": self.params}]
        self.state: dict[int, dict[str, Any]] = {}

    def step(self) -> None:
        import torch
        from torch.optim.adamw import adamw

        group = self.param_groups[0]
        if group["amsgrad"] or group["maximize"]:
            raise ValueError("the trainer's AdamW has neither amsgrad nor maximize")
        params, grads, averages, squares, steps = [], [], [], [], []
        for index, param in enumerate(self.params):
            if param.grad is None:
                continue
            slots = self.state.get(index)
            if slots is None:
                slots = self.state[index] = {
                    "step": torch.tensor(0.0, dtype=torch.float32),
                    "exp_avg": torch.zeros_like(param, memory_format=torch.preserve_format),
                    "exp_avg_sq": torch.zeros_like(param, memory_format=torch.preserve_format),
                }
            params.append(param)
            grads.append(param.grad)
            averages.append(slots["exp_avg"])
            squares.append(slots["exp_avg_sq"])
            steps.append(slots["step"])
        beta1, beta2 = group["betas"]
        with torch.no_grad():
            adamw(
                params,
                grads,
                averages,
                squares,
                [],
                steps,
                foreach=False,  # what torch.optim.AdamW chooses for CPU tensors
                amsgrad=False,
                beta1=beta1,
                beta2=beta2,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                eps=group["eps"],
                maximize=False,
            )

    def zero_grad(self, set_to_none: bool = True) -> None:
        for param in self.params:
            param.grad = None

    def state_dict(self) -> dict[str, Any]:
        group = {key: value for key, value in self.param_groups[0].items() if key != "params"}
        return {
            "state": {index: dict(slots) for index, slots in self.state.items()},
            "param_groups": [{**group, "params": list(range(len(self.params)))}],
        }

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        """`saved` as `state_dict` (or torch.optim.AdamW's) gives it."""
        import torch

        (group,) = saved["param_groups"]
        self.param_groups = [
            {**DEFAULT_GROUP, **group, "betas": tuple(group["betas"]), "params": self.params}
        ]
        self.state = {}
        for index, slots in saved["state"].items():
            param = self.params[int(index)]
            self.state[int(index)] = {
                "step": torch.as_tensor(slots["step"], dtype=torch.float32).clone(),
                "exp_avg": slots["exp_avg"].to(param.dtype).clone(),
                "exp_avg_sq": slots["exp_avg_sq"].to(param.dtype).clone(),
            }
