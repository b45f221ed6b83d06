"""``thresher adapt``: tasks from the index itself, a warm-started fit, the weights kept
with the index, run by the local policy on it (unless stale or weights are given)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

import thresher
from thresher.cli.main import main
from thresher.config import Config
from thresher.errors import InputError
from thresher.harness.trace import EpisodeStart
from thresher.index.embedded import fitted
from thresher.index.embedded.fitted import STALE_SHARE
from thresher.index.embedded.layout import current_generation, read_manifest
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.fusion import FusionWeights
from thresher.policies.local.adapted import (
    StaleAdaptedWeightsWarning,
    adapted_dir,
    read_fingerprint,
)
from thresher.policies.local.features import RANK_FEATURES
from thresher.policies.local.models import DEFAULT_WEIGHTS, load_weights
from thresher.train.local.adapt import AdaptReport, adapt_index, resolve_fusion


def _copy(index: Path, to: Path) -> Path:
    shutil.copytree(index, to)
    return to


def _start(index: Path, **options: object) -> EpisodeStart:
    """``episode_start`` of one local-policy search on ``index``."""
    result = thresher.search(
        "Where is the company headquartered?",
        index=index,
        policy="local",
        policy_options=options or None,
        reuse=False,
    )
    start = result.trace[0]
    assert isinstance(start, EpisodeStart)
    return start


def _info(index: Path, **options: object) -> dict:
    """``episode_start.policy_info`` of one local-policy search on ``index``."""
    return _start(index, **options).policy_info


def _fit_fusion(index: Path) -> None:
    """Fusion weights kept with ``index`` that fit its live generation."""
    fitted.save_fusion(
        index,
        FusionWeights(bm25=2.0, dense=1.0, rrf_k=10),
        fitted.fingerprint(current_generation(index)),
    )


@pytest.fixture(scope="module")
def adapted(
    world_index: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, AdaptReport]:
    """A copy of the generated world's index, adapted once with tiny sizes."""
    index = _copy(world_index, tmp_path_factory.mktemp("adapt") / "index")
    return index, adapt_index(index, n=40, seed=0, held_out=0.25, order_rounds=5)


def test_adapt_splits_fits_measures_and_keeps_weights_with_the_index(adapted) -> None:
    index, report = adapted
    assert report.synthesized >= 4
    assert report.train + report.held_out == report.synthesized
    assert report.held_out == round(0.25 * report.synthesized) >= 1
    assert report.before is not None and report.after is not None
    assert 0.0 <= report.before.recall5 <= 1.0 and 0.0 <= report.after.recall5 <= 1.0
    assert report.rows > report.positives > 0
    assert report.saved == str(adapted_dir(index) / "local_policy.json")
    weights = load_weights(report.saved)
    shipped = load_weights()
    assert weights.meta["adapted"]["generation"] == report.generation
    assert weights.controls == shipped.controls and weights.constants == shipped.constants
    assert weights.meta["adapted"]["models"] == ["order"]  # the default: the order alone
    assert report.refit == weights.meta["adapted"]["refit"] == ["order"]
    assert report.settings["models"] == ["order"]
    assert weights.order is not None and shipped.order is not None
    assert weights.order.params["model"] != shipped.order.params["model"]
    assert weights.order.params["model"].count("Tree=") == (
        shipped.order.params["model"].count("Tree=") + 5
    )
    for name in ("base", "full", "stop", "final"):  # left as shipped
        assert getattr(weights, name).to_dict() == getattr(shipped, name).to_dict(), name
    kept = read_fingerprint(index)
    assert kept is not None and kept.generation == report.generation
    assert kept.documents == report.documents
    lines = (adapted_dir(index) / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == report.synthesized
    # no fusion weights kept with the index: fit and run under plain RRF, as the shipped
    assert report.tasks_from == "synthesized"
    assert report.fusion == report.before_fusion == weights.fusion == "plain"
    assert weights.meta["fusion"] == "plain"


def test_the_local_policy_runs_the_adapted_weights_on_that_index(adapted, world_index) -> None:
    index, report = adapted
    info = _info(index)
    assert info["weights"] == "adapted" and info["path"] == report.saved
    assert _info(world_index) == {"weights": "shipped", "fusion": "plain"}  # another index


def test_explicit_weights_win_over_the_adapted_ones(adapted) -> None:
    index, _ = adapted
    info = _info(index, weights=str(DEFAULT_WEIGHTS))
    assert info == {"weights": "file", "path": str(DEFAULT_WEIGHTS.resolve()), "fusion": "plain"}


def test_adapted_weights_hold_through_a_small_change_and_go_stale_past_a_large_one(
    adapted, tmp_path: Path
) -> None:
    index = _copy(adapted[0], tmp_path / "index")
    assert read_fingerprint(index) is not None
    docs = sorted(read_manifest(current_generation(index)).documents)
    with EmbeddedStore(index, Config()) as store:
        store.delete_documents(docs[:1])
    info = _info(index)
    assert info["weights"] == "adapted" and 0 < info["changed_share"] <= STALE_SHARE
    with EmbeddedStore(index, Config()) as store:
        store.delete_documents(docs[1 : int(len(docs) * 0.3)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        info = _info(index)
    assert info["weights"] == "shipped" and info["adapted"] == "stale"
    assert info["changed_share"] > STALE_SHARE
    assert any(issubclass(w.category, StaleAdaptedWeightsWarning) for w in caught)
    assert "thresher adapt --index" in str(caught[-1].message)


def test_adapted_weights_without_a_readable_fingerprint_warn_and_run_the_shipped_ones(
    adapted, tmp_path: Path
) -> None:
    index = _copy(adapted[0], tmp_path / "index")
    (adapted_dir(index) / "fingerprint.json").write_text('{"schema": "older"}\n', encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        info = _info(index)
    assert info["weights"] == "shipped" and info["adapted"] == "no fingerprint"
    assert any(issubclass(w.category, StaleAdaptedWeightsWarning) for w in caught)
    assert "thresher adapt --index" in str(caught[-1].message)


def test_adapt_refuses_an_unknown_model_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="order, base, full, final, stop"):
        adapt_index(tmp_path / "nowhere", models=("order", "ranker"))


def test_adapt_no_save_only_measures(world_index: Path, tmp_path: Path, capsys) -> None:
    index = _copy(world_index, tmp_path / "index")
    args = ["adapt", "--index", str(index), "--n", "8", "--order-rounds", "2", "--no-save"]
    assert main([*args, "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "tasks synthesized of 8 asked" in out and "held out" in out
    assert "shipped weights" in out and "adapted weights" in out and "not saved" in err
    assert not adapted_dir(index).exists()
    assert main([*args, "--json", "--features", "rank"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["saved"] is None and report["train"] + report["held_out"] == report["synthesized"]
    assert report["settings"]["features"] == ["rank"]
    assert report["before"]["recall5"] >= 0 and report["after"]["recall5"] >= 0
    assert not adapted_dir(index).exists()
    assert _info(index) == {"weights": "shipped", "fusion": "plain"}


def test_adapt_reuses_the_tasks_a_run_kept_and_fits_under_the_index_fitted_fusion(
    adapted, tmp_path: Path
) -> None:
    first_index, first = adapted
    index = _copy(first_index, tmp_path / "index")
    kept = tmp_path / "tasks.jsonl"
    shutil.copy(adapted_dir(index) / "tasks.jsonl", kept)
    _fit_fusion(index)
    report = adapt_index(index, tasks=kept, seed=0, held_out=0.25, order_rounds=2, fusion="auto")
    phases = set(report.seconds)  # the phases run (their durations are not checked)
    assert report.tasks_from == str(kept) and "synthesize" not in phases
    assert report.synthesized == report.requested == first.synthesized
    assert (report.train, report.held_out, report.by_hops) == (
        first.train,
        first.held_out,
        first.by_hops,
    )
    # auto: the index keeps fresh fusion weights, so the rows are collected and the
    # adapted weights run under them; before is the shipped weights as they run today
    assert report.fusion == "fitted" and report.before_fusion == "plain"
    assert report.before == first.before  # the same held-out tasks, the same weights
    weights = load_weights(report.saved)
    assert weights.fusion == "fitted" and weights.meta["adapted"]["tasks_from"] == str(kept)
    start = _start(index)
    assert start.policy_info["weights"] == "adapted" and start.policy_info["fusion"] == "fitted"
    assert start.config["retrieval"]["fitted_fusion"] is True
    # the shipped weights on the same index stay on plain RRF
    shipped = _start(index, weights=str(DEFAULT_WEIGHTS))
    assert shipped.policy_info["fusion"] == "plain"
    assert shipped.config["retrieval"]["fitted_fusion"] is False


def test_adapt_tasks_refuses_a_file_that_is_not_tasks_of_the_index(adapted, tmp_path: Path) -> None:
    index, _ = adapted
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "no schema"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="bad.jsonl:1"):
        adapt_index(index, tasks=bad, save=False)
    with pytest.raises(InputError, match="nowhere.jsonl"):
        adapt_index(index, tasks=tmp_path / "nowhere.jsonl", save=False)
    lines = (adapted_dir(index) / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    other = tmp_path / "other.jsonl"
    record = json.loads(lines[0])
    record["evidence"][0]["doc_id"] = "not/in/this/index.md"
    other.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="not in the index.*drop --tasks"):
        adapt_index(index, tasks=other, save=False)
    one = tmp_path / "one.jsonl"
    one.write_text(lines[0] + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="too few"):
        adapt_index(index, tasks=one, save=False)


def test_adapt_cli_reads_tasks_and_refuses_both_n_and_tasks(adapted, capsys) -> None:
    index, report = adapted
    kept = adapted_dir(index) / "tasks.jsonl"
    args = ["adapt", "--index", str(index), "--tasks", str(kept), "--no-save"]
    assert main([*args, "--order-rounds", "2", "--held-out", "0.25", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"{report.synthesized} tasks read from {kept}" in out
    assert "run under plain fusion" in out and "shipped weights, plain" in out
    assert main([*args, "--n", "5"]) != 0
    assert "give one of them" in capsys.readouterr().err


def test_adapt_fusion_fitted_needs_fresh_fusion_weights(adapted, tmp_path: Path) -> None:
    index, _ = adapted
    with pytest.raises(InputError, match="thresher fit-fusion --index"):
        adapt_index(index, fusion="fitted", save=False)
    with pytest.raises(InputError, match="auto, plain, fitted"):
        adapt_index(index, fusion="rrf", save=False)
    copy = _copy(index, tmp_path / "index")
    _fit_fusion(copy)
    assert resolve_fusion(copy, "fitted", Config()) == resolve_fusion(copy, "auto", Config())
    assert resolve_fusion(copy, "fitted", Config()) == "fitted"
    assert resolve_fusion(index, "auto", Config()) == "plain"  # no fusion.json
    off = Config().override({"retrieval.fitted_fusion": "false"})
    assert resolve_fusion(copy, "auto", off) == "plain"
    with pytest.raises(InputError, match="retrieval.fitted_fusion is off"):
        resolve_fusion(copy, "fitted", off)


def test_adapt_with_the_rank_features_keeps_the_shipped_trees_and_adds_ones_reading_them(
    world_index: Path, tmp_path: Path
) -> None:
    index = _copy(world_index, tmp_path / "index")
    report = adapt_index(index, n=40, seed=0, held_out=0.25, order_rounds=5, features=("rank",))
    assert report.refit == ["order"]
    assert report.settings["features"] == ["rank"] and report.saved is not None
    weights, shipped = load_weights(report.saved), load_weights()
    assert weights.order is not None and shipped.order is not None
    assert weights.order.features == shipped.order.features + RANK_FEATURES
    trees = weights.order.params["model"].split("end of trees")[0].split("Tree=")[1:]
    kept = shipped.order.params["model"].split("end of trees")[0].split("Tree=")[1:]
    assert trees[: len(kept)] == kept and len(trees) == len(kept) + 5
    assert weights.meta["adapted"]["features"] == ["rank"]
    assert _info(index)["weights"] == "adapted"  # and the policy runs them


def test_adapt_refuses_an_unknown_feature_set_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="feature sets ranks unknown; name some of rank"):
        adapt_index(tmp_path / "nowhere", features=("ranks",))


def test_adapt_bag_keeps_a_bagged_order_model_the_policy_runs(
    adapted, tmp_path: Path, capsys
) -> None:
    index, report = adapted
    kept = adapted_dir(index) / "tasks.jsonl"
    copy = _copy(index, tmp_path / "index")
    args = ["adapt", "--index", str(copy), "--tasks", str(kept), "--held-out", "0.25"]
    extra = ["--order-rounds", "3", "--bag", "2", "--order-seed", "1", "--no-progress"]
    assert main([*args, *extra]) == 0
    assert "refit order (order bagged over 2 seeds)" in capsys.readouterr().out
    saved = adapted_dir(copy) / "local_policy.json"
    assert json.loads(saved.read_text(encoding="utf-8"))["format"] == 2
    weights, shipped = load_weights(saved), load_weights()
    assert weights.order is not None and shipped.order is not None
    assert weights.order.bagged and weights.order.bag == 2
    assert weights.order.params["base"] == shipped.order.params["model"]
    assert [m.count("Tree=") for m in weights.order.params["members"]] == [3, 3]
    assert weights.meta["adapted"]["bag"] == 2 and weights.meta["adapted"]["order_seed"] == 1
    assert weights.meta["order"]["bag"] == 2
    kept_report = json.loads((adapted_dir(copy) / "report.json").read_text(encoding="utf-8"))
    assert kept_report["settings"]["bag"] == 2 and kept_report["settings"]["order_seed"] == 1
    assert report.settings["bag"] == 1  # the default: one booster
    assert _info(copy)["weights"] == "adapted"  # and the policy runs them
    with pytest.raises(InputError, match="bagged and cannot be continued"):
        adapt_index(copy, tasks=kept, save=False, start=weights)
    with pytest.raises(InputError, match="--bag must be 1 or more"):
        adapt_index(copy, tasks=kept, save=False, bag=0)
