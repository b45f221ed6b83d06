"""Does it learn: SFT from ``export-sft`` records, then GRPO inside thresher's harness, then a paired eval.

Runs in the rl virtualenv (torch, TRL and transformers; never the main ``.venv``)::

    make rl-bench                       # builds .venv-rl, runs the defaults below
    HF_HUB_OFFLINE=1 PYTHONPATH=$PWD/src .venv-rl/bin/python bench/bench_rl.py \\
        [--seeds 0,1,2] [--grpo-steps 20] [--device cpu|cuda] [--model PATH_OR_CONFIG]

Nothing is downloaded. What runs, in order:

1. **Worlds.** Seeded fictional worlds (``thresher.synth.world``, size small) are generated and
   indexed into ``--workdir`` (reused when present): the training worlds (``--train-worlds``)
   and an evaluation world of another seed (``--eval-world``). Their two-hop planted chains are
   the tasks.
2. **SFT records.** A scripted solver (search the entity the question names, then the bridge
   entity the first hop's fact names, then answer with the documents shown for each hop)
   drives ``thresher.env.SearchEnv`` on every training task; its traces go through
   ``thresher.train.sft.export_sft`` (what ``thresher export-sft`` runs, ``turns`` layout) and
   each record becomes a prompt-completion row, the prompt in the form the LLM policy sends
   (``chat_messages``). Each row comes with thresher's tool schemas (what the LLM policy sends)
   and again with the tools as TRL renders the environment's methods (what GRPO sends) when
   the two render differently.
3. **Model.** By default a byte-level BPE trained on the training worlds and the records, and a
   small Llama built from a config (``rl/tiny.py``; ``--hidden``, ``--layers``), random weights
   drawn from the seed. ``--model`` takes a ``save_pretrained`` folder (a real base model and
   its tokenizer) or a JSON file of ``LlamaConfig`` fields (a bigger model from scratch).
4. **SFT** with TRL's ``SFTTrainer`` (loss on the completion only) for ``--sft-epochs``: one
   checkpoint (``WORKDIR/ckpt-sft``; the first seed draws the weights), which every GRPO seed
   starts from (``--reuse-sft`` starts from an existing one).
5. **GRPO** with TRL's ``GRPOTrainer`` for ``--grpo-steps`` steps: ``--tasks-per-step`` tasks
   per step, ``--group`` rollouts each, on thresher's environment factory
   (``thresher.integrations.trl``: append mode, training mode, the harness's tools, budget and
   trace) with ``thresher_reward`` (the reward of ``train.rewards.reward`` on the rollout's
   trace). The mean reward of each step is printed per seed; "learned" says whether the mean of
   the last ``--window`` steps beats the mean of the first ``--window``. By default it trains
   on one task (``--tasks 1``: the one-task overfit run the issue allows when learning across
   tasks is out of reach on two shared cores); ``--tasks 0`` takes every two-hop task of the
   training world.
6. **Paired eval** of the SFT checkpoint against the GRPO one (seed ``--eval-seed``) on the
   evaluation world's two-hop tasks: each checkpoint is served by ``rl/chat_server.py`` on a
   loopback port, and ``thresher eval --a sft.json --b grpo.json`` runs thresher's LLM policy
   against the two servers over HTTP. The paired differences (recall@5, output F1, trajectory
   recall, answer found, ...), each side's mean ``train.rewards.reward`` on its traces and the
   exit reasons are printed. ``--eval-only`` runs this stage alone on the workdir's
   checkpoints.

The figures (and the command that produced them) are in docs/rl.md, "Does it learn:
bench_rl". Asserts nothing; exits 1 only when a stage crashes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "rl"))

#: the harness settings of every stage (short chunks and few results keep sequences short)
SETTINGS: dict[str, Any] = {
    "chunking.max_tokens": 160,
    "episode.search_results": 3,
    "episode.max_turns": 6,
    "llm.max_malformed": 2,
}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# -- 1. worlds ----------------------------------------------------------------------------
@dataclass(frozen=True)
class World:
    """A generated world: its seed, index folder, two-hop tasks and chains by question."""

    seed: int
    index: Path
    tasks_file: Path
    tasks: list[Any]
    chains: dict[str, dict[str, Any]]
    docs: list[str]


def build_world(seed: int, root: Path, config: Any) -> World:
    """Generate and index world ``seed`` under ``root`` (reused when there); its 2-hop tasks."""
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest
    from thresher.synth.world.generate import generate_world
    from thresher.tasks.readers import load_tasks

    folder, index = root / f"world{seed}", root / f"index{seed}"
    if not (folder / ".world" / "chains.jsonl").exists():
        generate_world(seed, "small", folder)
    if not index.exists():
        ingest(iter_documents([folder]), index, config, progress=False)
    two_hop = [
        line
        for line in (folder / ".world" / "chains.jsonl").read_text().splitlines()
        if json.loads(line)["n_hops"] == 2
    ]
    tasks_file = root / f"world{seed}-2hop.jsonl"
    tasks_file.write_text("".join(line + "\n" for line in two_hop))
    chains = {c["question"]: c for c in map(json.loads, two_hop)}
    docs = [p.read_text(errors="replace") for p in sorted(folder.rglob("*")) if p.is_file()]
    return World(seed, index, tasks_file, load_tasks(tasks_file), chains, docs)


# -- 2. SFT records --------------------------------------------------------------------------
def _call(name: str, arguments: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "id": f"solver{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


_DOC = re.compile(r'<chunk id="[^"]*" doc="([^"]*)"')


def solve(env: Any, task: Any, chain: dict[str, Any]) -> Any:
    """The scripted solver's episode of ``task`` on ``env``: one search per hop (the hop's
    subject), then the gold documents it was shown, each justified by its hop's fact."""
    step = env.reset(task)
    shown: set[str] = set()
    for n, hop in enumerate(chain["hops"]):
        step = env.step(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [_call("search_corpus", {"query": hop["subject"]}, n)],
            }
        )
        for message in step.appended:
            shown.update(_DOC.findall(str(message.get("content") or "")))
    from thresher.train.sft import final_text

    cited = [
        {"doc_id": h["doc"], "justification": h["fact"]} for h in chain["hops"] if h["doc"] in shown
    ]
    step = env.step({"role": "assistant", "content": final_text(cited)})
    return env.rollout()


def sft_rows(
    worlds: Sequence[World], config: Any, root: Path, trl_tools: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], str]:
    """Prompt-completion rows from ``export_sft`` records of the solver's episodes, and a line
    saying what was exported."""
    from thresher.env import SearchEnv
    from thresher.harness.trace import write_jsonl
    from thresher.index.backends import open_store
    from thresher.policies.llm.messages import chat_messages
    from thresher.train.sft import SftConfig, export_sft

    traces: list[Path] = []
    rewards: list[float] = []
    tasks: list[Any] = []
    for world in worlds:
        with contextlib.closing(open_store(str(world.index), config)) as store:
            env = SearchEnv(store, config)
            for task in world.tasks:
                rollout = solve(env, task, world.chains[task.question])
                path = root / "solver" / f"world{world.seed}-{task.task_id}.jsonl"
                path.parent.mkdir(parents=True, exist_ok=True)
                write_jsonl(rollout.trace, path)
                traces.append(path)
                rewards.append(rollout.reward.total if rollout.reward else math.nan)
                tasks.append(task)
    out = root / "sft.jsonl"
    report = export_sft(traces, tasks, out, SftConfig(layout="turns"))
    rows = []
    for line in out.read_text().splitlines():
        record = json.loads(line)
        messages = [{k: v for k, v in m.items() if k != "weight"} for m in record["messages"]]
        prompt = chat_messages(messages[:-1])
        renderings = [record["tools"]]
        if json.dumps(trl_tools, sort_keys=True) != json.dumps(record["tools"], sort_keys=True):
            renderings.append(trl_tools)
        for tools in renderings:
            rows.append(
                {"prompt": prompt, "completion": [messages[-1]], "tools": json.dumps(tools)}
            )
    summary = (
        f"solver: {len(traces)} episodes, reward mean {statistics.fmean(rewards):.3f}; "
        f"export-sft kept {report.kept_whole + report.kept_sampled}, {report.records} records "
        f"-> {len(rows)} rows ({'one tool rendering' if len(rows) == report.records else 'two tool renderings'})"
    )
    return rows, summary


# -- 3. model ----------------------------------------------------------------------------
def make_tokenizer(opts: argparse.Namespace, texts: list[str]) -> Any:
    from tiny import build_tokenizer

    if opts.model and Path(opts.model).is_dir():
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(opts.model)
    return build_tokenizer(texts, vocab_size=opts.vocab)


def make_model(opts: argparse.Namespace, tokenizer: Any, seed: int) -> Any:
    import torch

    if opts.model and Path(opts.model).is_dir():
        from transformers import AutoModelForCausalLM

        torch.manual_seed(seed)
        return AutoModelForCausalLM.from_pretrained(opts.model)
    if opts.model:  # a JSON file of LlamaConfig fields
        from transformers import LlamaConfig, LlamaForCausalLM

        fields = json.loads(Path(opts.model).read_text())
        config = LlamaConfig(
            **{
                "vocab_size": len(tokenizer),
                "pad_token_id": tokenizer.pad_token_id,
                "eos_token_id": tokenizer.eos_token_id,
                "bos_token_id": None,
                "tie_word_embeddings": True,
                **fields,
            }
        )
        torch.manual_seed(seed)
        return LlamaForCausalLM(config)
    from tiny import build_model

    return build_model(
        tokenizer,
        seed,
        hidden=opts.hidden,
        layers=opts.layers,
        heads=opts.heads,
        max_positions=opts.max_positions,
    )


def trl_tool_schemas(factory: Any) -> list[dict[str, Any]]:
    """The tools as TRL renders an environment's public methods (``get_json_schema``)."""
    import inspect

    from transformers.utils import get_json_schema

    env = factory()
    return [
        get_json_schema(member)
        for name, member in inspect.getmembers(env, predicate=inspect.ismethod)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


# -- 4-5. SFT, then GRPO ---------------------------------------------------------------------
def common_args(opts: argparse.Namespace, out: Path, seed: int) -> dict[str, Any]:
    return {
        "output_dir": str(out),
        "report_to": "none",
        "save_strategy": "no",
        "seed": seed,
        "disable_tqdm": True,
        "logging_steps": 1,
        "use_cpu": opts.device == "cpu",
        # TRL turns both on by default; on CPU bf16 autocast makes each step several times slower
        "bf16": opts.device == "cuda" and opts.bf16,
        "gradient_checkpointing": False,
    }


def run_sft(
    opts: argparse.Namespace,
    model: Any,
    tokenizer: Any,
    rows: list[dict[str, Any]],
    out: Path,
    seed: int,
) -> tuple[Any, float]:
    from datasets import Dataset
    from transformers import PrinterCallback, TrainerCallback
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(
        **common_args(opts, out, seed),
        num_train_epochs=opts.sft_epochs,
        per_device_train_batch_size=opts.sft_batch,
        learning_rate=opts.sft_lr,
        lr_scheduler_type="constant",
        max_length=opts.max_positions,
    )

    class Progress(TrainerCallback):
        def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            losses = [h["loss"] for h in state.log_history if "loss" in h]
            if losses and int(state.epoch or 0) % 5 == 0:
                log(f"  SFT epoch {state.epoch:.0f}: loss {losses[-1]:.3f}")

    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        callbacks=[Progress()],
    )
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return trainer.model, losses[-1] if losses else math.nan


def run_grpo(
    opts: argparse.Namespace,
    model: Any,
    tokenizer: Any,
    factory: Any,
    rows: list[dict[str, Any]],
    out: Path,
    seed: int,
) -> tuple[Any, list[float]]:
    from datasets import Dataset
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from thresher.integrations.trl import thresher_reward

    rewards: list[float] = []

    class Rewards(TrainerCallback):
        def on_log(
            self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any
        ) -> None:
            if logs and "reward" in logs:
                rewards.append(float(logs["reward"]))
                log(f"  GRPO step {state.global_step}: reward {rewards[-1]:.3f}")

    per_step = opts.group * opts.tasks_per_step
    args = GRPOConfig(
        **common_args(opts, out, seed),
        per_device_train_batch_size=per_step,
        num_generations=opts.group,
        max_steps=opts.grpo_steps,
        max_completion_length=opts.max_completion,
        max_tool_calling_iterations=opts.max_tool_iterations,
        learning_rate=opts.grpo_lr,
        temperature=opts.temperature,
        shuffle_dataset=True,
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[thresher_reward],
        args=args,
        train_dataset=Dataset.from_list(rows),
        environment_factory=factory,
        callbacks=[Rewards()],
    )
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    return trainer.model, rewards


# -- 6. paired eval over HTTP ----------------------------------------------------------------
@contextlib.contextmanager
def serving(checkpoint: Path, name: str, opts: argparse.Namespace, log_path: Path) -> Iterator[str]:
    """``rl/chat_server.py`` on ``checkpoint``; yields its base URL (``.../v1``)."""
    cmd = [
        sys.executable,
        str(ROOT / "rl" / "chat_server.py"),
        "--model",
        str(checkpoint),
        "--name",
        name,
        "--device",
        opts.device,
        "--threads",
        str(opts.threads),
    ]
    with log_path.open("w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"chat server for {checkpoint} did not start; see {log_path}")
        yield line.split()[-1] + "/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def side_config(path: Path, label: str, base_url: str, name: str, opts: argparse.Namespace) -> Path:
    settings = {
        "label": label,
        "policy": {"name": "llm"},
        "chunking": {"max_tokens": SETTINGS["chunking.max_tokens"]},
        "episode": {
            "search_results": SETTINGS["episode.search_results"],
            "max_turns": SETTINGS["episode.max_turns"],
        },
        "llm": {
            "base_url": base_url,
            "model": name,
            "temperature": opts.eval_temperature,
            "max_tokens": opts.eval_max_tokens,
            "max_malformed": SETTINGS["llm.max_malformed"],
            "first_tool_choice": "auto",
            "first_response_format": "none",
            "max_retries": 0,
        },
    }
    path.write_text(json.dumps(settings, indent=1))
    return path


def paired_eval(
    opts: argparse.Namespace, sft: Path, grpo: Path, world: World, root: Path
) -> dict[str, Any]:
    out = root / f"eval-world{world.seed}"
    with (
        serving(sft, "sft", opts, root / "serve-sft.log") as url_a,
        serving(grpo, "grpo", opts, root / "serve-grpo.log") as url_b,
    ):
        a = side_config(root / "sft.json", "sft", url_a, "sft", opts)
        b = side_config(root / "grpo.json", "grpo", url_b, "grpo", opts)
        cmd = [
            sys.executable,
            "-m",
            "thresher.cli.main",
            "eval",
            "--a",
            str(a),
            "--b",
            str(b),
            str(world.tasks_file),
            "--index",
            str(world.index),
            "--out",
            str(out),
            "--rollouts",
            str(opts.eval_rollouts),
            "--json",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"thresher eval failed ({done.returncode}): {done.stderr[-2000:]}")
    summary = dict(json.loads((out / "summary.json").read_text()))
    summary["reward"] = {side: eval_rewards(out / "traces" / side, world) for side in ("a", "b")}
    return summary


def eval_rewards(traces: Path, world: World) -> list[float]:
    """``train.rewards.reward`` (beta 4) of each evaluated episode, task by task."""
    from thresher.harness.trace import read_jsonl
    from thresher.train.rewards import reward

    return [
        reward(read_jsonl(traces / f"{task.task_id}.jsonl"), task).total
        for task in world.tasks
        if (traces / f"{task.task_id}.jsonl").exists()
    ]


# -- the run ---------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seeds",
        default="0,1,2",
        help="GRPO seeds, one run each from the one SFT checkpoint (the first also seeds the model and SFT)",
    )
    parser.add_argument("--train-worlds", default="7", help="world seeds whose 2-hop tasks train")
    parser.add_argument("--eval-world", type=int, default=8, help="the evaluation world's seed")
    parser.add_argument(
        "--tasks", type=int, default=1, help="training tasks (the first N two-hop ones; 0: all)"
    )
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--bf16", action="store_true", help="bf16 on cuda")
    parser.add_argument(
        "--model", default="", help="a save_pretrained folder, or a JSON file of LlamaConfig fields"
    )
    parser.add_argument(
        "--vocab", type=int, default=2048, help="the trained tokenizer's vocabulary"
    )
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--max-positions", type=int, default=8192)
    parser.add_argument("--sft-epochs", type=float, default=60)
    parser.add_argument("--sft-batch", type=int, default=2)
    parser.add_argument("--sft-lr", type=float, default=1e-2)
    parser.add_argument(
        "--reuse-sft", action="store_true", help="start from WORKDIR/ckpt-sft when it exists"
    )
    parser.add_argument("--grpo-steps", type=int, default=20)
    parser.add_argument("--group", type=int, default=8, help="rollouts per task (GRPO group)")
    parser.add_argument("--tasks-per-step", type=int, default=2)
    parser.add_argument("--grpo-lr", type=float, default=1e-3)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--max-completion", type=int, default=2048)
    parser.add_argument("--max-tool-iterations", type=int, default=4)
    parser.add_argument("--window", type=int, default=5, help="steps compared at each end")
    parser.add_argument(
        "--eval-seed",
        type=int,
        default=-1,
        help="whose checkpoints to evaluate (default: the first seed); -2: skip",
    )
    parser.add_argument("--eval-rollouts", type=int, default=1)
    parser.add_argument(
        "--eval-only", action="store_true", help="only the paired eval of WORKDIR's checkpoints"
    )
    parser.add_argument("--eval-temperature", type=float, default=0.0)
    parser.add_argument("--eval-max-tokens", type=int, default=192)
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (on shared cores more only contend)"
    )
    parser.add_argument("--workdir", default="/tmp/thresher-bench-rl")
    opts = parser.parse_args(argv)

    import datasets
    import torch
    import transformers
    import trl

    from thresher.config import Config
    from thresher.index.backends import open_store
    from thresher.integrations.trl import build_dataset, environment_factory

    torch.set_num_threads(opts.threads)
    datasets.disable_progress_bars()
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    started = time.perf_counter()
    root = Path(opts.workdir)
    root.mkdir(parents=True, exist_ok=True)
    config = Config().override(SETTINGS)
    seeds = [int(s) for s in opts.seeds.split(",") if s]
    log(
        f"trl {trl.__version__}, transformers {transformers.__version__}, torch {torch.__version__}, device {opts.device}"
    )
    worlds = [build_world(int(s), root, config) for s in opts.train_worlds.split(",")]
    eval_world = build_world(opts.eval_world, root, config)
    train_tasks = [t for w in worlds for t in w.tasks]
    if opts.tasks:
        train_tasks = train_tasks[: opts.tasks]
        opts.tasks_per_step = min(opts.tasks_per_step, len(train_tasks))
        worlds = [
            World(
                worlds[0].seed,
                worlds[0].index,
                worlds[0].tasks_file,
                train_tasks,
                worlds[0].chains,
                worlds[0].docs,
            )
        ]
    log(
        f"tasks: {len(train_tasks)} two-hop training tasks (worlds {opts.train_worlds}), {len(eval_world.tasks)} for eval (world {opts.eval_world})"
    )

    stores = [open_store(str(w.index), config) for w in worlds]
    if len(stores) != 1:
        raise SystemExit("GRPO here runs on one index: give one --train-worlds seed")
    factory = environment_factory(stores[0], config)
    trl_tools = trl_tool_schemas(factory)
    rows, summary = sft_rows(worlds, config, root, trl_tools)
    log(summary)
    # enough rows for every step (TRL draws tasks_per_step distinct rows a step; one epoch may not fill it)
    grpo_rows = build_dataset(train_tasks) * max(
        1, math.ceil(opts.tasks_per_step * opts.grpo_steps / len(train_tasks))
    )
    texts = [d for w in worlds for d in w.docs] + [
        json.dumps(r) for r in rows[:: max(1, len(rows) // 50)]
    ]
    sft_dir = root / "ckpt-sft"
    reuse = (opts.reuse_sft or opts.eval_only) and (sft_dir / "config.json").exists()
    if reuse:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(sft_dir)
        if getattr(tokenizer, "response_template", None) is None:
            from tiny import RESPONSE_TEMPLATE

            tokenizer.response_template = RESPONSE_TEMPLATE
    else:
        tokenizer = make_tokenizer(opts, texts)
    lengths = [
        len(
            tokenizer.apply_chat_template(
                r["prompt"] + r["completion"],
                tools=json.loads(r["tools"]),
                tokenize=True,
                return_dict=False,
            )
        )
        for r in rows
    ]
    log(f"tokenizer: {len(tokenizer)} tokens; SFT rows {min(lengths)}-{max(lengths)} tokens")

    curves: dict[int, list[float]] = {}
    if opts.eval_only:
        log("eval only: the checkpoints in the workdir")
        seeds = seeds[:0]
    t0 = time.perf_counter()
    if reuse or opts.eval_only:
        log(f"SFT: reusing {sft_dir}")
    else:
        model = make_model(opts, tokenizer, seeds[0])
        if opts.device == "cuda":
            model = model.to("cuda")
        n_params = sum(p.numel() for p in model.parameters())
        model, loss = run_sft(opts, model, tokenizer, rows, root / "sft-run", seeds[0])
        model.save_pretrained(sft_dir)
        tokenizer.save_pretrained(sft_dir)
        log(
            f"SFT (seed {seeds[0]}): {n_params / 1e6:.2f}M parameters, {opts.sft_epochs:g} epochs, last loss {loss:.3f} ({time.perf_counter() - t0:.0f}s)"
        )

    from transformers import AutoModelForCausalLM

    for seed in seeds:
        t1 = time.perf_counter()
        model = AutoModelForCausalLM.from_pretrained(sft_dir)
        if opts.device == "cuda":
            model = model.to("cuda")
        model, rewards = run_grpo(
            opts, model, tokenizer, factory, grpo_rows, root / f"grpo-run-{seed}", seed
        )
        grpo_dir = root / f"ckpt-grpo-{seed}"
        model.save_pretrained(grpo_dir)
        tokenizer.save_pretrained(grpo_dir)
        curves[seed] = rewards
        log(
            f"seed {seed}: GRPO {len(rewards)} steps ({time.perf_counter() - t1:.0f}s): "
            + " ".join(f"{r:.2f}" for r in rewards)
        )

    if curves:
        print()
        print(
            f"reward per GRPO step ({opts.group} rollouts x {opts.tasks_per_step} tasks a step{', one task (overfit)' if len(train_tasks) == 1 else ''}):"
        )
    w = opts.window
    for seed, rewards in curves.items():
        if not rewards:
            print(f"  seed {seed}: no step logged")
            continue
        first, last = statistics.fmean(rewards[:w]), statistics.fmean(rewards[-w:])
        verdict = "learned" if last > first else "did not learn"
        print(
            f"  seed {seed}: first {w} steps {first:.3f}, last {w} steps {last:.3f} -> {verdict}; max {max(rewards):.3f}"
        )
    if len(curves) > 1 and all(curves.values()):
        firsts = [statistics.fmean(r[:w]) for r in curves.values()]
        lasts = [statistics.fmean(r[-w:]) for r in curves.values()]
        print(
            f"  mean over seeds: first {statistics.fmean(firsts):.3f}, last {statistics.fmean(lasts):.3f}; last > first in {sum(b > a for a, b in zip(firsts, lasts, strict=True))}/{len(curves)} seeds"
        )

    if opts.eval_seed != -2:
        first = int(opts.seeds.split(",")[0])
        seed = first if opts.eval_seed == -1 else opts.eval_seed
        log(
            f"paired eval: SFT vs GRPO checkpoints of seed {seed} on world {opts.eval_world}, over HTTP"
        )
        summary_json = paired_eval(
            opts, root / "ckpt-sft", root / f"ckpt-grpo-{seed}", eval_world, root
        )
        print(
            f"\npaired eval (A = SFT, B = GRPO; seed {seed}; {summary_json['n_tasks']} tasks of world {opts.eval_world}):"
        )
        for metric, d in summary_json["paired"].items():
            ma, mb = (
                summary_json["means"]["a"][metric]["mean"],
                summary_json["means"]["b"][metric]["mean"],
            )
            print(
                f"  {metric:18s} A {ma:8.3f}  B {mb:8.3f}  A-B {d['mean_diff']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] p={d['p_value']:.3f}"
            )
        ra, rb = summary_json["reward"]["a"], summary_json["reward"]["b"]
        if ra and rb:
            print(
                f"  {'reward (beta 4)':18s} A {statistics.fmean(ra):8.3f}  B {statistics.fmean(rb):8.3f}"
                f"  (train.rewards.reward on each trace; {len(ra)} and {len(rb)} episodes)"
            )
        print(
            f"  exit reasons: A {summary_json['exit_reasons']['a']}, B {summary_json['exit_reasons']['b']}"
        )
        print(f"  report: {root / f'eval-world{opts.eval_world}' / 'summary.md'}")
    for store in stores:
        store.close()
    log(f"done in {time.perf_counter() - started:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
