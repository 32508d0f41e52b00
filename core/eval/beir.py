"""BEIR-format datasets: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``, validated."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import InputError
from core.eval.metrics import Qrels
from core.jsonl import read_jsonl


@dataclass(slots=True)
class BeirDataset:
    """A loaded BEIR split: the corpus, the split's queries and their judgements."""

    root: Path
    split: str
    corpus: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: Qrels
    skipped_queries: int = 0

    @property
    def corpus_path(self) -> Path:
        """The corpus file (its size and mtime key the index cache)."""
        return self.root / "corpus.jsonl"


def _jsonl(path: Path) -> Iterable[dict[str, Any]]:
    return (item for _, item in read_jsonl(path, required="_id", example="an object with an _id"))


def read_qrels(path: Path) -> Qrels:
    """Read a BEIR qrels TSV (header line, then query-id, corpus-id, score).

    Raises:
        InputError: a line without three tab-separated fields or a non-integer score.
    """
    qrels: Qrels = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").split("\t")
            if number == 1 and not (len(parts) == 3 and parts[2].lstrip("-").isdigit()):
                continue  # the header
            if not line.strip():
                continue
            if len(parts) != 3:
                raise InputError(f"{path}:{number}: expected 'query-id<TAB>corpus-id<TAB>score'")
            try:
                grade = int(parts[2])
            except ValueError:
                raise InputError(f"{path}:{number}: score {parts[2]!r} is not an integer") from None
            qrels.setdefault(parts[0], {})[parts[1]] = grade
    return qrels


def load_beir(root: Path, split: str) -> BeirDataset:
    """Load a BEIR dataset folder for one split.

    Args:
        root: folder holding corpus.jsonl, queries.jsonl and qrels/.
        split: qrels file name without ``.tsv`` (``test``, ``train``, ``dev``).

    Returns:
        The dataset; queries without any relevant judgement are dropped (counted in
        ``skipped_queries``), as BEIR's evaluation does.

    Raises:
        InputError: a missing file or split, or a malformed line (naming it).
    """
    if not root.is_dir():
        raise InputError(f"dataset folder {str(root)!r} does not exist")
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (root / name).is_file():
            raise InputError(f"{root} is not a BEIR dataset: {name} is missing")
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        folder = root / "qrels"
        available = sorted(p.stem for p in folder.glob("*.tsv")) if folder.is_dir() else []
        raise InputError(
            f"split {split!r} not found: no {qrels_path}"
            + (f" (available: {', '.join(available)})" if available else "")
        )
    corpus = {
        str(d["_id"]): (str(d.get("title") or ""), str(d.get("text") or ""))
        for d in _jsonl(root / "corpus.jsonl")
    }
    all_queries = {str(q["_id"]): str(q.get("text") or "") for q in _jsonl(root / "queries.jsonl")}
    judged = read_qrels(qrels_path)
    qrels = {
        q: grades for q, grades in judged.items()
        if any(g > 0 for g in grades.values()) and all_queries.get(q, "").strip()
    }
    if not qrels:
        raise InputError(f"{qrels_path} judges no query of queries.jsonl as having a relevant document")
    return BeirDataset(
        root=root, split=split, corpus=corpus,
        queries={q: all_queries[q] for q in qrels}, qrels=qrels,
        skipped_queries=len(judged) - len(qrels),
    )
