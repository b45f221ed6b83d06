"""``thresher train-policy``: fits weights from a small HotpotQA-format file (made up here)."""

from __future__ import annotations

import json

from thresher.cli.main import main
from thresher.policies.local.models import load_weights

TOWNS = ["Marrowick", "Caddow", "Dunfell", "Fennick", "Garrow", "Ilsby"]
PROVINCES = ["Tessaly", "Orlen", "Vask", "Brenmark", "Sollen", "Quarrow"]


def records() -> list[dict]:
    out = []
    for i, (town, province) in enumerate(zip(TOWNS, PROVINCES, strict=True)):
        works = f"{town} Glassworks No {i}"
        titles = [works, town] + [f"Distractor {i}-{j}" for j in range(3)]
        sentences = [
            [f"The {works} was founded in the river town of {town}.", " It made lenses."],
            [f"{town} is a small town in the province of {province}.", " It has a market."],
        ] + [[f"Distractor {i}-{j} is about rope making in {TOWNS[j]}."] for j in range(3)]
        out.append(
            {
                "id": f"q{i}",
                "question": f"In which province is the town where the {works} was founded?",
                "answer": province,
                "type": "bridge",
                "level": "easy",
                "supporting_facts": {"title": [works, town], "sent_id": [0, 0]},
                "context": {"title": titles, "sentences": sentences},
            }
        )
    return out


def test_train_policy_writes_loadable_weights(tmp_path, capsys):
    data = tmp_path / "tiny_hotpot.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in records()) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    code = main(["train-policy", "--data", str(data), "--out", str(out), "--json"])
    assert code == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # --json: no running commentary on stderr
    report = json.loads(captured.out)
    weights = load_weights(report["weights"])
    assert weights.meta["questions"] == 6 and weights.meta["rows"] > 0
    assert (out / "indexes").is_dir()


def test_train_policy_needs_questions(tmp_path, capsys):
    empty = tmp_path / "notes.md"
    empty.write_text("# Notes\n\nNo questions here.\n", encoding="utf-8")
    assert main(["train-policy", "--data", str(empty), "--out", str(tmp_path / "o")]) != 0
    assert "no questions" in capsys.readouterr().err


def test_train_policy_tasks_with_existing_index_and_curriculum(tmp_path, capsys):
    from thresher.train.local.data import ensure_index

    data = tmp_path / "tiny_hotpot.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in records()) + "\n", encoding="utf-8")
    index = ensure_index([data], tmp_path / "idx")
    out = tmp_path / "out"
    argv = ["train-policy", "--tasks-index", f"{data}:{index}", "--curriculum", "8"]
    assert main([*argv, "--out", str(out), "--json"]) == 0
    weights = load_weights(json.loads(capsys.readouterr().out)["weights"])
    assert weights.meta["questions"] == 8 and weights.meta["curriculum"] == 8
    assert weights.meta["rows"] > 0 and not (out / "indexes").exists()


def test_train_policy_tasks_index_needs_an_index(tmp_path, capsys):
    data = tmp_path / "tiny_hotpot.jsonl"
    data.write_text(json.dumps(records()[0]) + "\n", encoding="utf-8")
    argv = ["train-policy", "--tasks-index", f"{data}:{tmp_path / 'nope'}"]
    assert main([*argv, "--out", str(tmp_path / "o")]) != 0
    assert "no index folder" in capsys.readouterr().err


def test_train_policy_tunes_controls_by_reward(tmp_path, capsys):
    from thresher.train.local.data import ensure_index

    data = tmp_path / "tiny_hotpot.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in records()) + "\n", encoding="utf-8")
    index = ensure_index([data], tmp_path / "idx")
    out = tmp_path / "out"
    argv = ["train-policy", "--tasks-index", f"{data}:{index}", "--tune", f"{data}:{index}"]
    assert main([*argv, "--tune-limit", "3", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"wrote {out / 'local_policy.json'}" in captured.out
    weights = load_weights(out / "local_policy.json")
    tuned = weights.meta["tuned"]
    assert tuned["tasks"] == 3 and len(tuned["grid"]) == 6
    assert weights.controls == tuned["chosen"]["controls"]
    # then the constants, by a coordinate search on the same tasks, named in the file
    assert "/tiny_hotpot.jsonl (3) (3 tasks" in weights.constants.tuned_on
    assert weights.meta["tuned_constants"]["source"].endswith("/tiny_hotpot.jsonl (3)")
    assert weights.meta["tuned_constants"]["trials"]
    assert "reward" in captured.err  # the tuning grid, for a person (not with --json)


def test_train_policy_tunes_an_existing_weights_file_on_several_task_files(tmp_path, capsys):
    """``--weights FILE``: no collection or fit; the constants tuned on two task files
    (a tiny generated world's chains split in two), both named with their counts."""
    from thresher.config import Config
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest
    from thresher.synth.world import generate_world

    generate_world(5, "small", tmp_path / "world")
    ingest(iter_documents([tmp_path / "world"]), tmp_path / "idx", Config(), progress=False)
    lines = (tmp_path / "world" / ".world" / "chains.jsonl").read_text().splitlines()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "tasks.jsonl").write_text("\n".join(lines[:2]) + "\n")
    (tmp_path / "b" / "tasks.jsonl").write_text("\n".join(lines[2:5]) + "\n")
    start = load_weights()
    out = tmp_path / "out"
    argv = ["train-policy", "--weights", str(start.save(tmp_path / "w.json")), "--out", str(out)]
    argv += ["--tune", f"{tmp_path / 'a' / 'tasks.jsonl'}:{tmp_path / 'idx'}"]
    argv += ["--tune", f"{tmp_path / 'b' / 'tasks.jsonl'}:{tmp_path / 'idx'}"]
    argv += ["--tune-limit", "2", "--tune-controls", "none", "--tune-constants", "cue_bonus"]
    assert main([*argv, "--controls", "max_hops=3", "--tune-margin", "1000", "--json"]) == 0
    weights = load_weights(json.loads(capsys.readouterr().out)["weights"])
    # the models are the start file's; the controls given are kept; nothing beat 1000 SE
    assert weights.full.to_dict() == start.full.to_dict()
    assert weights.meta["rows"] == start.meta["rows"] and weights.meta["tuned_from"] == "w.json"
    assert weights.controls == {**start.controls, "max_hops": 3} and "tuned" not in weights.meta
    assert weights.constants.cue_bonus == start.constants.cue_bonus
    tuned_on = weights.constants.tuned_on
    assert "a/tasks.jsonl (2), " in tuned_on and "b/tasks.jsonl (2) (4 tasks" in tuned_on
    assert [t["value"] for t in weights.meta["tuned_constants"]["trials"]] == [1.2, 0.6, 1.8]


def test_train_policy_weights_refuses_data_and_needs_a_tuning(tmp_path, capsys):
    w = str(load_weights().save(tmp_path / "w.json"))
    argv = ["train-policy", "--weights", w, "--data", w, "--out", str(tmp_path / "o")]
    assert main(argv) != 0
    assert "drop --data" in capsys.readouterr().err
    assert main(["train-policy", "--weights", w, "--out", str(tmp_path / "o")]) != 0
    assert "give --tune" in capsys.readouterr().err
