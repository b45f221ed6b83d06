"""CPU smoke of a real trainer: TRL's GRPOTrainer with an environment factory, scripted replies.

Run with ``make rl-smoke`` (its own virtualenv, ``HF_HUB_OFFLINE=1``), or from a virtualenv holding
``rl/requirements.txt`` and thresher: ``python rl/smoke.py``. Nothing comes from a model hub: the
tokenizer is trained on a seeded world's documents (``tiny.build_tokenizer``), the model is a
random two-layer Llama (``tiny.build_model``), and ``model.generate`` answers from scripts
(``scripted.ScriptedGenerator``). TRL does the rest as in a real run: prompts with tool schemas,
``parse_response``, the tool loop, sequence and masks, rewards, group advantages, the loss, the
optimizer step.

What it asserts, per batch (one generation round) and over the run:

- TRL's tool call and failure counts equal the scripts';
- the loss mask (``completion_mask * tool_mask``) is 1 exactly on the scripted replies' tokens,
  which stand where the scripts put them, and 0 on everything between them (every tool-result
  token included);
- re-rendering each rollout's messages with the chat template gives the ids TRL trained on, for
  every rollout whose replies parse (no re-templating drift);
- each rollout's reward is the one its script declares;
- advantages are non-zero (and of the reward's sign against the group mean) in groups whose rewards
  differ, and zero in groups whose rewards are all equal; an unscorable rollout (reward None)
  has advantage 0 and leaves its group's mean to the others;
- every loss is finite, and the weights changed;

and, with thresher's SearchEnv (``--setup searchenv``, the default; ``searchenv.py``), per rollout:
its trace replays to the state the episode ended in, and the reward TRL logged is
``train.rewards.reward`` on that trace; and the tool schemas TRL renders are thresher's.

It prints one closing line of what it checked. The environment, reward, rows and scripts come in
one :class:`~seam.SmokeSetup` (``--setup searchenv``, or ``--setup stand-in``: an in-memory
stand-in with no harness).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
import transformers  # noqa: E402
import trl  # noqa: E402
from datasets import Dataset  # noqa: E402
from scripted import Rollout, ScriptedGenerator  # noqa: E402
from seam import SmokeSetup  # noqa: E402
from tiny import TOOL_RESPONSE, build_model, build_tokenizer  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402


class SmokeFailure(AssertionError):
    """A check of the smoke failed; the message says which and on what."""


@dataclass(slots=True)
class Batch:
    """What the smoke observed of one generation round."""

    rollouts: list[Rollout]
    output: dict[str, Any]
    tool_calls: int = 0
    tool_failures: int = 0
    rewards: list[float | None] = field(default_factory=list)
    prompts: list[Any] = field(default_factory=list)
    completions: list[Any] = field(default_factory=list)
    harness_checked: int = 0


class ObservedGRPOTrainer(GRPOTrainer):
    """GRPOTrainer that keeps, per batch, what the checks read; it changes nothing it observes."""

    def __init__(
        self,
        *args: Any,
        generator: ScriptedGenerator,
        check_rollout: Callable[[Any, float | None], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.generator = generator
        self.check_rollout = check_rollout
        self.batches: list[Batch] = []
        self.losses: list[float] = []
        self._current: Batch | None = None

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        self.generator.begin_batch()
        self._current = Batch(rollouts=[], output={})
        output = super()._generate_and_score_completions(inputs)
        batch = self._current
        batch.rollouts = list(self.generator.rollouts)
        batch.output = {
            k: v.detach().clone() if torch.is_tensor(v) else v for k, v in output.items()
        }
        if self.check_rollout is not None:  # now: TRL resets the pooled environments next batch
            for i, (env, logged) in enumerate(zip(self.environments, batch.rewards, strict=True)):
                try:
                    self.check_rollout(env, logged)
                except AssertionError as exc:
                    name = batch.rollouts[i].script.name
                    raise SmokeFailure(
                        f"batch {len(self.batches)} row {i} ({name}): {exc}"
                    ) from exc
                batch.harness_checked += 1
        self.batches.append(batch)
        return output

    def _tool_call_loop(self, *args: Any, **kwargs: Any) -> Any:
        result = super()._tool_call_loop(*args, **kwargs)
        assert self._current is not None
        self._current.tool_calls, self._current.tool_failures = result[4], result[5]
        return result

    def _calculate_rewards(
        self, inputs: Any, prompts: Any, completions: Any, completion_ids_list: Any
    ) -> Any:
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        assert self._current is not None
        weighted = torch.nansum(rewards * self.reward_weights, dim=1)
        unscorable = torch.isnan(rewards).all(dim=1)
        self._current.rewards = [
            None if u else float(x) for x, u in zip(weighted, unscorable, strict=True)
        ]
        self._current.prompts, self._current.completions = prompts, completions
        return rewards

    def compute_loss(self, model: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        loss = super().compute_loss(model, inputs, *args, **kwargs)
        self.losses.append(float(loss.detach()))
        return loss


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise SmokeFailure(message)


def same_reward(logged: float | None, declared: float | None) -> bool:
    """Whether a reward TRL logged (a float32 tensor entry; None: unscorable) is ``declared``."""
    if logged is None or declared is None:
        return logged is declared
    return float(torch.tensor(declared, dtype=torch.float32)) == logged


def _unpadded(ids: torch.Tensor, mask: torch.Tensor) -> list[int]:
    return ids[mask.bool()].tolist()


def check_batch(trainer: ObservedGRPOTrainer, batch: Batch, group: int) -> dict[str, int]:
    """Assert the per-batch properties (module docstring); return counts for the closing line."""
    tok = trainer.processing_class
    out = batch.output
    rollouts = batch.rollouts
    n = len(rollouts)
    _check(
        n == out["completion_ids"].shape[0],
        f"{n} scripted rollouts for {out['completion_ids'].shape[0]} rows",
    )
    calls = sum(r.script.calls for r in rollouts)
    failures = sum(r.script.failures for r in rollouts)
    _check(
        (batch.tool_calls, batch.tool_failures) == (calls, failures),
        f"TRL counted {batch.tool_calls} tool calls and {batch.tool_failures} failures; the scripts have {calls} and {failures}",
    )
    counts = {
        "calls": calls,
        "failures": failures,
        "trained": 0,
        "tool_tokens": 0,
        "retemplated": 0,
        "parseable": 0,
    }
    tool_response_id = tok.convert_tokens_to_ids(TOOL_RESPONSE)
    loss_mask = out["completion_mask"] * out["tool_mask"]
    for i, rollout in enumerate(rollouts):
        name = f"row {i} ({rollout.script.name})"
        prompt = _unpadded(out["prompt_ids"][i], out["prompt_mask"][i])
        _check(
            prompt == rollout.prompt_ids,
            f"{name}: the trained prompt is not the one generation saw",
        )
        completion = out["completion_ids"][i]
        length = int(out["completion_mask"][i].sum())
        expected = torch.zeros_like(loss_mask[i])
        for (start, end), turn in zip(rollout.reply_spans(), rollout.turns, strict=True):
            _check(
                completion[start:end].tolist() == turn.reply_ids,
                f"{name}: the scripted reply is not at completion[{start}:{end}]",
            )
            expected[start:end] = 1
        bad = (loss_mask[i] != expected).nonzero().flatten().tolist()
        _check(
            not bad,
            f"{name}: loss mask differs from the scripted replies at completion positions {bad[:10]}",
        )
        between = [
            int(t) for t, m in zip(completion[:length], expected[:length], strict=True) if not m
        ]
        _check(
            between.count(tool_response_id) == sum(t.calls for t in rollout.script.replies),
            f"{name}: {between.count(tool_response_id)} tool results outside the replies, one per call expected",
        )
        counts["trained"] += int(expected.sum())
        counts["tool_tokens"] += len(between)
        # no drift: the chat template re-renders the messages into the very ids TRL trained on
        if all(r.calls or "<tool_call>" not in r.text for r in rollout.script.replies):
            counts["parseable"] += 1
            rendered = tok.apply_chat_template(
                batch.prompts[i] + batch.completions[i],
                tools=trainer.tools,
                tokenize=True,
                return_dict=False,
            )
            _check(
                rendered == prompt + completion[:length].tolist(),
                f"{name}: re-templating its messages does not give the ids TRL trained on",
            )
            counts["retemplated"] += 1
        _check(
            same_reward(batch.rewards[i], rollout.script.reward),
            f"{name}: reward {batch.rewards[i]}, its script declares {rollout.script.reward}",
        )
    advantages = out["advantages"].view(-1, group)
    counts["differing"] = counts["equal"] = counts["unscorable"] = 0
    for g in range(advantages.shape[0]):
        a = advantages[g]
        rewards = batch.rewards[g * group : (g + 1) * group]
        scored = torch.tensor([x for x in rewards if x is not None])
        none = torch.tensor([x is None for x in rewards])
        counts["unscorable"] += int(none.sum())
        _check(torch.all(a[none] == 0), f"group {g}: rewards {rewards}, advantages {a.tolist()}")
        if len(scored) == 0 or torch.all(scored == scored[0]):
            counts["equal"] += 1
            _check(
                torch.all(a == 0), f"group {g}: equal rewards {rewards} but advantages {a.tolist()}"
            )
        else:
            counts["differing"] += 1
            _check(
                torch.equal(torch.sign(a[~none]), torch.sign(scored - scored.mean()))
                and torch.all(a[~none] != 0),
                f"group {g}: rewards {rewards} but advantages {a.tolist()}",
            )
    return counts


def run(
    setup: SmokeSetup, *, steps: int = 2, group: int = 4, per_step: int = 8, seed: int = 0
) -> str:
    """Train ``steps`` steps on ``setup``, check everything, return the closing line.

    Raises:
        SmokeFailure: a check failed.
    """
    started = time.perf_counter()
    tokenizer = build_tokenizer(setup.corpus)
    model = build_model(tokenizer, seed=seed)
    built = time.perf_counter()
    rows = [{"prompt": [{"role": "user", "content": ""}], **row} for row in setup.rows]
    _check(
        len(rows) * group == steps * per_step,
        f"{len(rows)} rows x {group} make {len(rows) * group} rollouts, not {steps} x {per_step}",
    )
    generator = ScriptedGenerator(tokenizer, setup.script_for, group)
    with tempfile.TemporaryDirectory(prefix="rl-smoke-") as out_dir:
        args = GRPOConfig(
            output_dir=out_dir,
            per_device_train_batch_size=per_step,
            num_generations=group,
            max_steps=steps,
            max_completion_length=setup.max_completion_length,
            learning_rate=1e-2,
            shuffle_dataset=False,
            logging_steps=1,
            report_to="none",
            save_strategy="no",
            use_cpu=True,
            seed=seed,
            disable_tqdm=True,
            # TRL turns both on by default; on CPU, bf16 autocast makes each step several times slower,
            # and a 2-layer model has no activations worth recomputing
            bf16=False,
            gradient_checkpointing=False,
        )
        trainer = ObservedGRPOTrainer(
            model=model,
            processing_class=tokenizer,
            reward_funcs=setup.reward_funcs,
            args=args,
            train_dataset=Dataset.from_list(rows),
            environment_factory=setup.environment_factory,
            generator=generator,
            check_rollout=setup.check_rollout,
        )
        if setup.check_tools is not None:
            try:
                setup.check_tools(trainer.tools)
            except AssertionError as exc:
                raise SmokeFailure(f"tool schemas: {exc}") from exc
        # the pattern of TRL's tests: sampling replaced, everything else real
        trainer.model.generate = generator
        before = {k: v.detach().clone() for k, v in trainer.model.named_parameters()}
        trainer.train()
    trained = time.perf_counter()
    _check(
        len(trainer.batches) == steps, f"{len(trainer.batches)} generation rounds for {steps} steps"
    )
    totals: dict[str, int] = {}
    for batch in trainer.batches:
        for k, v in check_batch(trainer, batch, group).items():
            totals[k] = totals.get(k, 0) + v
    _check(totals["differing"] > 0, "no group with differing rewards: nothing to learn from")
    _check(
        bool(trainer.losses) and all(math.isfinite(x) for x in trainer.losses),
        f"losses {trainer.losses}",
    )
    changed = sum(not torch.equal(before[k], v) for k, v in trainer.model.named_parameters())
    _check(changed > 0, "no weight changed")
    harness = ""
    if setup.check_rollout is not None:
        checked = sum(b.harness_checked for b in trainer.batches)
        harness = (
            f"traces replay to the episodes' end states and logged rewards = "
            f"train.rewards.reward on them ({checked}/{steps * per_step} rollouts); "
        )
    if setup.check_tools is not None:
        harness += f"TRL's tool schemas = thresher's ({len(trainer.tools)} tools); "
    print(
        f"timing: tokenizer and model {built - started:.1f}s, {steps} GRPO steps {trained - built:.1f}s",
        flush=True,
    )
    return (
        f"rl-smoke ok: trl {trl.__version__} GRPOTrainer (transformers {transformers.__version__}, "
        f"torch {torch.__version__}) on the {setup.name}, {steps} steps x {per_step} scripted rollouts: "
        f"tool calls {totals['calls']} and failures {totals['failures']} as scripted; "
        f"loss mask = the scripted replies' {totals['trained']} tokens, the {totals['tool_tokens']} "
        f"tool-result and template tokens between them 0; re-templated ids = trained ids "
        f"({totals['retemplated']}/{totals['parseable']} parseable rollouts); rewards as scripted; "
        f"advantages non-zero in {totals['differing']} groups with differing rewards, zero in "
        f"{totals['equal']} with equal ones, zero for {totals['unscorable']} unscorable rollout(s); {harness}losses finite ({len(trainer.losses)}); "
        f"{changed}/{len(before)} weight tensors changed"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--setup",
        choices=["searchenv", "stand-in"],
        default="searchenv",
        help="what to train on: thresher's SearchEnv through its TRL adapter, or an in-memory stand-in",
    )
    parser.add_argument("--world-seed", type=int, default=7, help="seed of the fictional world")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the model's weights and the trainer"
    )
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rl-smoke-world-") as workdir:
        if opts.setup == "searchenv":
            from searchenv import searchenv_setup

            setup = searchenv_setup(Path(workdir), opts.world_seed)
        else:
            from standin import stand_in_setup

            from thresher.synth.world import build_world_docs

            setup = stand_in_setup(build_world_docs(opts.world_seed, "small"))
        try:
            line = run(setup, seed=opts.seed)
        except SmokeFailure as exc:
            print(f"rl-smoke FAILED: {exc}", file=sys.stderr)
            return 1
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
