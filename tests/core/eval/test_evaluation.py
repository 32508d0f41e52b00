"""Retrieval evaluation: metrics on hand cases, BEIR loading, and ``ragbot eval retrieval`` end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bots.cli import main
from core.errors import InputError
from core.eval.beir import load_beir, read_qrels
from core.eval.metrics import Row, dcg, mrr_at_k, ndcg_at_k, percentile, ratio, recall_at_k, score_run
from core.eval.retrieval import document_text, index_key

# ------------------------------------------------------------------ metrics


def test_dcg_hand_case() -> None:
    assert dcg([1, 0, 1]) == pytest.approx(1.0 + 1 / math.log2(4))
    assert dcg([]) == 0.0


def test_ndcg_perfect_worst_and_partial() -> None:
    judged = {"a": 1, "b": 1}
    assert ndcg_at_k(["a", "b", "x"], judged, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "y"], judged, 10) == 0.0
    # a at rank 2 only: (1/log2 3) / (1 + 1/log2 3)
    expected = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["x", "a"], judged, 10) == pytest.approx(expected)


def test_ndcg_uses_graded_gains_and_cutoff() -> None:
    judged = {"a": 2, "b": 1}
    assert ndcg_at_k(["b", "a"], judged, 10) == pytest.approx(
        (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert ndcg_at_k(["x", "a"], judged, 1) == 0.0
    assert ndcg_at_k(["a"], {"a": 0}, 10) == 0.0  # nothing relevant


def test_recall_and_mrr() -> None:
    judged = {"a": 1, "b": 1, "c": 0}
    ranked = ["x", "a", "c", "b"]
    assert recall_at_k(ranked, judged, 2) == 0.5
    assert recall_at_k(ranked, judged, 4) == 1.0
    assert recall_at_k(ranked, {}, 4) == 0.0
    assert mrr_at_k(ranked, judged, 10) == 0.5
    assert mrr_at_k(ranked, judged, 1) == 0.0
    assert mrr_at_k(["c", "b"], judged, 10) == 0.5  # grade 0 is not relevant


def test_percentile_interpolates() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0], 50) == 1.5
    assert percentile([1.0, 2.0, 3.0, 4.0], 100) == 4.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0) == 1.0


def test_score_run_averages_and_ratio() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    row = score_run("s", {"q1": ["a"], "q2": ["x"]}, qrels, [1.0, 3.0])
    assert (row.queries, row.ndcg_10, row.recall_100, row.mrr_10) == (2, 0.5, 0.5, 0.5)
    assert row.latency_p50_ms == 2.0
    base = Row("b", 2, 0.25, 0.5, 0.25, 0.0, 1.0, 1.5)
    r = ratio(row, base)
    assert r["ndcg_10"] == 2.0 and r["mrr_10"] is None


def test_document_text_repeats_the_title() -> None:
    assert document_text("T", "body", title_repeat=2) == "T\nT\nbody"
    assert document_text("", "body", title_repeat=2) == "body"


# ------------------------------------------------------------------ dataset

CORPUS = {
    "d1": ("Gazebo simulation", "Gazebo simulates robots with physics engines and sensors."),
    "d2": ("ROS 2 topics", "Nodes publish messages on topics and subscribe to them."),
    "d3": ("Inverse kinematics", "Solving joint angles for a desired end effector pose uses the Jacobian."),
    "d4": ("Sourdough", "Bread rises when the starter ferments the dough overnight."),
    "d5": ("Domain randomization", "Randomizing textures and lighting helps sim to real transfer."),
}
QUERIES = {
    "q1": "which physics engines does gazebo simulate robots with",
    "q2": "how do nodes publish messages on a topic",
    "q3": "jacobian for joint angles of the end effector",
    "q4": "randomizing lighting for sim to real",
    "q9": "a query nobody judged",
}
QRELS = {"q1": "d1", "q2": "d2", "q3": "d3", "q4": "d5"}


def write_beir(root: Path, *, split: str = "test") -> Path:
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for doc_id, (title, text) in CORPUS.items():
            f.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with (root / "queries.jsonl").open("w", encoding="utf-8") as f:
        for qid, text in QUERIES.items():
            f.write(json.dumps({"_id": qid, "text": text}) + "\n")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t1" for q, d in QRELS.items()]
    (root / "qrels" / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_load_beir_reads_split_and_drops_unjudged(tmp_path: Path) -> None:
    data = load_beir(write_beir(tmp_path / "tiny"), "test")
    assert set(data.queries) == {"q1", "q2", "q3", "q4"}
    assert data.qrels["q4"] == {"d5": 1}
    assert data.corpus["d3"][0] == "Inverse kinematics"


def test_read_qrels_rejects_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq1\td1\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected"):
        read_qrels(path)
    path.write_text("q1\td1\t1\nq1\td2\t2\n", encoding="utf-8")  # no header is fine
    assert read_qrels(path) == {"q1": {"d1": 1, "d2": 2}}


def test_load_beir_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_beir(tmp_path / "nope", "test")
    root = write_beir(tmp_path / "tiny")
    with pytest.raises(InputError, match=r"split 'dev' not found.*available: test"):
        load_beir(root, "dev")
    (root / "queries.jsonl").unlink()
    with pytest.raises(InputError, match=r"queries\.jsonl is missing"):
        load_beir(root, "test")


def test_index_key_changes_with_what_decides_the_index(tmp_path: Path) -> None:
    corpus = write_beir(tmp_path / "tiny") / "corpus.jsonl"
    key = index_key(corpus, model_id="m", title_repeat=2)
    assert key == index_key(corpus, model_id="m", title_repeat=2)
    assert key != index_key(corpus, model_id="other", title_repeat=2)
    assert key != index_key(corpus, model_id="m", title_repeat=1)
    corpus.write_text(corpus.read_text() + "\n", encoding="utf-8")
    assert key != index_key(corpus, model_id="m", title_repeat=2)


# ------------------------------------------------------------------ the command


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    for var in ("COHERE_API_KEY", "QDRANT_URL", "RAGBOT_DENSE_WEIGHT", "RAGBOT_CANDIDATES",
                "RAGBOT_TITLE_REPEAT"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def test_eval_retrieval_end_to_end_with_baseline_and_cache(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_beir(env / "tiny")
    argv = ["eval", "retrieval", "--dataset", str(root), "--json", "--baseline", "bm25s", "--top-k", "3"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["split"] == "test" and first["documents"] == 5 and first["top_k"] == 3
    assert first["ours"]["queries"] == 4 and first["baseline"]["queries"] == 4
    assert first["ranking_algorithm"].startswith("convex(")
    assert first["ours"]["recall_10"] == 1.0  # every query is easy on five documents
    assert first["ours"]["ndcg_10"] > 0.9
    assert set(first["ratio"]) >= {"ndcg_10", "recall_100", "latency_p50_ms"}
    assert first["index_seconds"] is not None
    assert main(argv) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["index_seconds"] is None  # reused the cached index
    assert second["ours"]["ndcg_10"] == first["ours"]["ndcg_10"]


def test_eval_retrieval_prints_a_table(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_beir(env / "tiny", split="train")
    assert main(["eval", "retrieval", "--dataset", str(root), "--split", "train"]) == 0
    out = capsys.readouterr().out
    assert "| ragbot |" in out and "nDCG@10" in out and "tiny train: 4 queries" in out


@pytest.mark.parametrize("argv,message", [
    (["--dataset", "missing-folder"], "does not exist"),
    (["--dataset", "tiny", "--split", "dev"], "split 'dev' not found"),
    (["--dataset", "tiny", "--dense-weight", "2"], "--dense-weight"),
])
def test_eval_retrieval_bad_input_exits_2_with_one_line(
    env: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    write_beir(env / "tiny")
    assert main(["eval", "retrieval", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_eval_without_subcommand_exits_2(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["eval"])
    assert exc.value.code == 2
