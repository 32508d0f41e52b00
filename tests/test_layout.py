"""The layout's rules, checked on the source: who may import what, and how big things may grow."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import ROOT

#: Modules allowed over 500 lines: the spec's entities in one place.
LONG_MODULES = {"core/models.py"}
#: Adapters talk to the core through protocols and bots/chat, never to a backend or an SDK.
ADAPTERS = ("bots/chat", "bots/slack", "bots/discord")
BACKENDS = ("storage", "qdrant_client", "qdrant_edge", "cohere", "google")


def sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def top(names: set[str]) -> set[str]:
    return {name.split(".")[0] for name in names}


@pytest.mark.parametrize("path", sources("core"), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_core_never_imports_storage_or_the_bots(path: Path) -> None:
    assert not top(imported(path)) & {"storage", "bots"}


@pytest.mark.parametrize("path", sources(*ADAPTERS), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_adapters_never_import_a_backend_or_an_sdk(path: Path) -> None:
    assert not top(imported(path)) & set(BACKENDS)


def test_no_module_over_500_lines_and_no_function_over_60() -> None:
    too_long: list[str] = []
    for path in sources("core", "bots", "storage"):
        name = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 500 and name not in LONG_MODULES:
            too_long.append(f"{name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = node.body[0]
                has_doc = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                           and isinstance(first.value.value, str) and len(node.body) > 1)
                start = node.body[1].lineno if has_doc else first.lineno
                length = (node.end_lineno or start) - start + 1
                if length > 60:
                    too_long.append(f"{name}:{node.lineno} {node.name}(): {length} lines")
    assert not too_long, "\n".join(too_long)
