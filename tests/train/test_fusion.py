"""Fitting the fusion weights to an index from tasks synthesized on it: the choice, its
held-out report, the store then fusing with it, and ``thresher fit-fusion``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from thresher.cli.main import main
from thresher.config import Config
from thresher.errors import InputError
from thresher.index.embedded import fitted
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.fusion import FusionWeights
from thresher.tasks.generate.pipeline import synthesize_tasks
from thresher.tasks.synthetic import SynthTask, to_eval_task, write_synth_tasks
from thresher.train.fusion import default_grid, fit_fusion, task_recall

_CONFIG = Config().override({"grep.timeout_s": 60.0})


@pytest.fixture
def index_copy(world_index: Path, tmp_path: Path) -> Path:
    """The shared world's index, copied: fitting writes into the folder."""
    return Path(shutil.copytree(world_index, tmp_path / "index"))


@pytest.fixture(scope="module")
def tasks(world_index: Path) -> list[SynthTask]:
    with EmbeddedStore(world_index, _CONFIG) as store:
        return synthesize_tasks(store, 40, seed=1, k=1).tasks


def test_the_fit_chooses_the_best_point_and_reports_the_held_out_part(world_index, tasks):
    assert len(tasks) >= 20
    with EmbeddedStore(world_index, _CONFIG) as store:
        fit = fit_fusion(store, tasks, k=5, held_out=0.3, seed=0)
    assert fit.default == FusionWeights(rrf_k=_CONFIG.retrieval.rrf_k)
    assert fit.fit_tasks + fit.held_out_tasks == len(tasks)
    assert fit.held_out_tasks == round(0.3 * len(tasks))
    grid = dict(fit.grid)
    assert set(grid) == {fit.default, *default_grid()}
    assert grid[fit.weights] == fit.fit_after == max(grid.values()) >= fit.fit_before
    assert grid[fit.default] == fit.fit_before
    if fit.fit_after == fit.fit_before:
        assert fit.weights == fit.default  # a tie keeps plain RRF
    assert fit.holds == (fit.held_out_after >= fit.held_out_before)
    assert all(0.0 <= x <= 1.0 for x in (fit.held_out_before, fit.bm25_alone, fit.dense_alone))
    assert json.loads(json.dumps(fit.to_dict()))["weights"] == fit.weights.to_dict()


def test_the_fit_scores_what_the_store_then_returns(index_copy, tasks):
    """Saved, the chosen weights make ``hybrid_search`` return the lists the fit scored."""
    leaning = FusionWeights(4.0, 1.0, 2)
    with EmbeddedStore(index_copy, _CONFIG) as store:
        fit = fit_fusion(store, tasks, held_out=0.0, grid=[leaning])
        gen = index_copy / str(store.stats().extra["generation"])
    fitted.save_fusion(index_copy, leaning, fitted.fingerprint(gen), fit.to_dict())
    with EmbeddedStore(index_copy, _CONFIG) as store:
        assert store.fusion_weights() == leaning
        recalls = []
        for task in map(to_eval_task, tasks):
            hits = store.hybrid_search(task.question, k=50)
            hops = tuple(frozenset(h) for h in task.hops)
            recalls.append(task_recall([h.chunk.chunk_id for h in hits], hops, 5))
    chosen = fit.weights
    assert sum(recalls) / len(recalls) == pytest.approx(dict(fit.grid)[chosen])


def test_too_few_tasks_is_an_input_error(world_index, tasks):
    with EmbeddedStore(world_index, _CONFIG) as store, pytest.raises(InputError, match="at least"):
        fit_fusion(store, tasks[:5])


def test_fit_fusion_command_keeps_the_weights_with_the_index(index_copy, tasks, tmp_path, capsys):
    task_file = tmp_path / "tasks.jsonl"
    write_synth_tasks(task_file, tasks)
    argv = ["fit-fusion", "--index", str(index_copy), "--tasks", str(task_file), "--json"]
    assert main([*argv, "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["saved"] is None and not (index_copy / fitted.FUSION_FILE).exists()
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tasks"] == len(tasks) and not out["synthesized"]
    assert out["weights"] == dry["weights"]
    if out["holds"]:
        body = fitted.read_fitted(index_copy)
        assert body is not None and body["weights"] == out["weights"]
        assert body["fit"]["held_out_recall"] == out["held_out_recall"]
        with EmbeddedStore(index_copy, _CONFIG) as store:
            assert store.fusion_weights().to_dict() == out["weights"]
    else:
        assert out["saved"] is None and not (index_copy / fitted.FUSION_FILE).exists()


def test_fit_fusion_command_synthesizes_its_tasks(index_copy, capsys):
    assert main(["fit-fusion", "--index", str(index_copy), "--n", "25", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "synthesized" in out and "held-out" in out and "dry run: nothing written" in out
    assert not (index_copy / fitted.FUSION_FILE).exists()
