"""Chunking: sections, sizes, overlap, whole code blocks, deterministic ids and hashes."""

from __future__ import annotations

import itertools
import random
import uuid
from dataclasses import replace

import pytest

from core.ingest.chunking import (
    CHUNKER_VERSION,
    MIN_SECTION_CHARS,
    chunk_document,
    chunk_id,
    document_hash,
    embedding_text,
    merge_small_sections,
)
from core.ingest.loaders import LoadedDocument, Section
from core.ingest.markdown import parse_markdown

WORDS = ["robot", "node", "topic", "sensor", "actuator", "message", "frame", "joint", "planner",
         "camera", "lidar", "controller", "gazebo", "simulation", "parameter", "service"]


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(sentence(rng) for _ in range(sentences))


def code(rng: random.Random, lines: int) -> str:
    body = "\n".join(f"value_{i} = compute('{rng.choice(WORDS)}')\n" if i % 5 == 0 else f"step({i})"
                     for i in range(lines))
    return f"```python\n{body}\n```"


def doc(sections: list[Section], *, source: str = "guide/nodes.md", raw: str = "abc") -> LoadedDocument:
    return LoadedDocument(
        source_document=source, title="ROS 2", url="https://book.dev/docs/guide/nodes",
        sections=sections, raw_sha256=raw, tags=["ros2"],
    )


def fences(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.lstrip().startswith(("```", "~~~")))


def test_sections_become_paths_and_ids_are_deterministic() -> None:
    rng = random.Random(1)
    sections = [
        Section(["ROS 2", "Nodes"], [paragraph(rng, 3)]),
        Section(["ROS 2", "Nodes", "Parameters"], [paragraph(rng, 3)]),
    ]
    chunks = chunk_document(doc(sections))
    assert [c.section for c in chunks] == ["ROS 2 > Nodes", "ROS 2 > Nodes > Parameters"]
    assert chunks[1].headings == ["ROS 2", "Nodes", "Parameters"]
    assert [c.chunk_index for c in chunks] == [0, 1]
    assert chunks[0].chunk_id == str(uuid.uuid5(uuid.NAMESPACE_URL, "guide/nodes.md#0")) == chunk_id(
        "guide/nodes.md", 0
    )
    assert all(c.tags == ["ros2"] and c.url.endswith("/guide/nodes") for c in chunks)
    again = chunk_document(doc(sections))
    assert [c.model_dump() for c in again] == [c.model_dump() for c in chunks]


def test_content_hash_follows_bytes_version_and_settings() -> None:
    base = doc([Section(["A"], ["x" * 300])])
    first = chunk_document(base)[0].content_hash
    assert chunk_document(base)[0].content_hash == first
    assert chunk_document(replace(base, raw_sha256="other"))[0].content_hash != first
    assert chunk_document(replace(base, url="https://elsewhere.dev/x"))[0].content_hash != first
    assert chunk_document(base, target_chars=1000)[0].content_hash != first
    assert CHUNKER_VERSION


def test_stored_fingerprints_stay_as_they_were() -> None:
    # Pinned: a change here re-embeds every page of every collection at the next ingest
    # (chunker 7: a table under a lead-in line of its block is split from it).
    page = LoadedDocument(source_document="guide/install.md", title="Install", url="https://x.dev/guide/install",
                          sections=[Section(["Install"], ["Run it."])], raw_sha256="ab" * 32, tags=["setup"])
    assert document_hash(page) == "70f1f20064a68a9c757b8ef81279e16a4dca03c1141519f855c1725c276a052e"
    assert document_hash(replace(page, parser="rst-1")) != document_hash(page)


def test_long_sections_pack_near_target_with_overlap() -> None:
    rng = random.Random(2)
    blocks = [paragraph(rng, rng.randint(2, 6)) for _ in range(20)]
    chunks = chunk_document(
        doc([Section(["Big"], blocks)]), target_chars=800, max_chars=1200, overlap_chars=120
    )
    assert len(chunks) > 3
    assert all(len(c.content) <= 1200 for c in chunks)
    assert all(len(c.content) >= 300 for c in chunks[:-1])
    for previous, current in itertools.pairwise(chunks):
        # The next chunk starts with the previous chunk's last words.
        head = current.content.split("\n\n")[0].split(". ")[0][:40]
        assert head in previous.content, (head, previous.content[-200:])


def test_overlap_never_opens_inside_a_code_span() -> None:
    first = "words to fill the chunk " * 25 + "set by a new `behavior: 'immediate' | 'delayed'` flag on it"
    chunks = chunk_document(doc([Section(["S"], [first, "Another paragraph. " * 35])]),
                            target_chars=800, max_chars=1200, overlap_chars=60)
    assert len(chunks) == 2
    assert chunks[1].content.startswith("flag on it\n\nAnother")  # not "'delayed'` flag on it"


def test_overlap_stays_within_the_section() -> None:
    rng = random.Random(3)
    sections = [Section(["A"], [paragraph(rng, 8)]), Section(["B"], [paragraph(rng, 8)])]
    a, b = chunk_document(doc(sections), overlap_chars=100)
    assert a.section == "A" and b.section == "B"
    assert b.content == sections[1].blocks[0]


def test_long_paragraph_splits_at_sentences() -> None:
    rng = random.Random(4)
    text = paragraph(rng, 40)
    chunks = chunk_document(doc([Section(["S"], [text])]), target_chars=500, max_chars=700, overlap_chars=0)
    assert len(chunks) > 2
    assert all(c.content.endswith(".") for c in chunks)
    assert " ".join(c.content for c in chunks) == text


def test_code_blocks_are_never_split() -> None:
    rng = random.Random(5)
    big = code(rng, 200)
    assert len(big) > 2000
    blocks = [paragraph(rng, 4), code(rng, 10), paragraph(rng, 5), big, paragraph(rng, 6), code(rng, 30)]
    chunks = chunk_document(doc([Section(["Code"], blocks)]))
    for c in chunks:
        assert fences(c.content) % 2 == 0, c.content
    assert any(big in c.content for c in chunks)  # the big block survives whole
    for c in chunks:
        if len(c.content) > 2000:
            assert big in c.content and len(c.content) - len(big) < MIN_SECTION_CHARS


@pytest.mark.parametrize("seed", range(12))
def test_property_every_chunk_has_balanced_fences_and_bounded_size(seed: int) -> None:
    rng = random.Random(seed)
    parts = []
    for _ in range(rng.randint(5, 25)):
        kind = rng.random()
        if kind < 0.15:
            parts.append(f"{'#' * rng.randint(1, 4)} {sentence(rng, 3)}")
        elif kind < 0.4:
            parts.append(code(rng, rng.choice([2, 8, 40, 150])))
        elif kind < 0.5:
            parts.append("\n".join(f"- {sentence(rng, 6)}" for _ in range(rng.randint(2, 30))))
        else:
            parts.append(paragraph(rng, rng.randint(1, 15)))
    sections = parse_markdown("\n\n".join(parts)).sections
    target, maximum = rng.choice([(400, 600), (1200, 2000)])
    chunks = chunk_document(doc(sections), target_chars=target, max_chars=maximum, overlap_chars=80)
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    for c in chunks:
        assert fences(c.content) % 2 == 0, c.content
        assert c.content.count("```") % 2 == 0
        if len(c.content) > maximum:
            # Only a single whole code block (with at most a short lead-in) may exceed max.
            assert fences(c.content) == 2, c.content[:300]


def test_a_long_list_is_never_cut_inside_the_code_an_item_holds() -> None:
    rng = random.Random(7)
    items = []
    for i in range(12):
        items.append(f"{i + 1}. {sentence(rng, 10)}")
        if i % 3 == 1:
            items.append("\n".join(f"   {line}" if line else "" for line in code(rng, 12).split("\n")))
    block = "\n".join(items)
    assert len(block) > 1200
    chunks = chunk_document(doc([Section(["Steps"], [block])]), target_chars=400, max_chars=600,
                            overlap_chars=0)
    assert len(chunks) > 2
    for c in chunks:
        assert fences(c.content) % 2 == 0, c.content
    # Code longer than a chunk is cut between its lines, never run together on one line.
    long_code = "\n".join(f"   option_{i} = value {i}" for i in range(70))
    block = f"1. Create the file:\n   ```ini\n{long_code}\n   ```\n2. Run it."
    chunks = chunk_document(doc([Section(["Steps"], [block])]), target_chars=400, max_chars=600,
                            overlap_chars=0)
    assert all(line.startswith("   option_") for c in chunks for line in c.content.split("\n")
               if "option_" in line)


def test_tiny_sections_merge_with_the_next_sibling() -> None:
    rng = random.Random(6)
    sections = [
        Section(["Guide", "Setup"], ["Install it."]),
        Section(["Guide", "Usage"], [paragraph(rng, 4)]),
        Section(["Guide", "Usage", "Flags"], [paragraph(rng, 20)]),
        Section(["Guide", "End"], ["Bye."]),
    ]
    chunks = chunk_document(doc(sections), target_chars=600, max_chars=900)
    assert chunks[0].section == "Guide"  # the two siblings share a chunk under their common parent
    assert chunks[0].content.startswith("Setup\n\nInstall it.\n\nUsage\n\n")
    assert all(len(c.content) >= MIN_SECTION_CHARS for c in chunks)
    assert "Bye." in chunks[-1].content and "End" in chunks[-1].content  # the last tiny one joins backwards
    merged = merge_small_sections(sections, min_chars=200, max_chars=900)
    assert merged[0].headings == ["Guide"]


def test_empty_document_has_no_chunks_and_bad_sizes_are_refused() -> None:
    assert chunk_document(doc([])) == []
    assert chunk_document(doc([Section(["A"], ["   "])])) == []
    with pytest.raises(ValueError, match="max_chars"):
        chunk_document(doc([]), target_chars=500, max_chars=100)
    with pytest.raises(ValueError, match="overlap_chars"):
        chunk_document(doc([]), target_chars=100, max_chars=200, overlap_chars=100)


def test_embedding_text_puts_title_and_section_first() -> None:
    chunks = chunk_document(doc([Section(["Nodes"], ["x" * 250]), Section(["ROS 2", "Topics"], ["y" * 250])]))
    assert embedding_text(chunks[0], title_repeat=1).startswith("ROS 2 > Nodes\n\nxxx")
    assert embedding_text(chunks[1], title_repeat=1).startswith("ROS 2 > Topics\n\nyyy")  # H1 = title
    assert embedding_text(chunks[0]).startswith("ROS 2 > Nodes\nROS 2 > Nodes\n\nxxx")  # title weighting
    assert chunks[0].content == "x" * 250


def test_changing_title_weighting_changes_the_hash() -> None:
    one = chunk_document(doc([Section(["Nodes"], ["x" * 250])]), title_repeat=1)
    two = chunk_document(doc([Section(["Nodes"], ["x" * 250])]), title_repeat=2)
    assert one[0].content_hash != two[0].content_hash


def test_a_lead_in_stays_with_the_block_it_introduces() -> None:
    rng = random.Random(7)
    lead = "Add the following script to your shell profile:"
    small, big = code(rng, 8), code(rng, 200)
    for block in (small, big):
        blocks = [paragraph(rng, 6), paragraph(rng, 6), lead, block, paragraph(rng, 3)]
        chunks = chunk_document(doc([Section(["Setup"], blocks)]), target_chars=900, max_chars=2000,
                                overlap_chars=0)
        holder = next(c for c in chunks if block in c.content)
        assert lead in holder.content, [c.content[:80] for c in chunks]


def test_an_entry_name_line_stays_with_the_description_it_names() -> None:
    rng = random.Random(7)
    name, description = "`--show-error-code-links`", paragraph(rng, 4)
    blocks = [paragraph(rng, 6), code(rng, 12), name, description, paragraph(rng, 3)]
    chunks = chunk_document(doc([Section(["Flags"], blocks)]), target_chars=900, max_chars=2000,
                            overlap_chars=0)
    holder = next(c for c in chunks if description[:60] in c.content)
    assert name in holder.content, [c.content[-80:] for c in chunks]
    # A lead-in giving the name goes with it too.
    lead = "The following flag shows links:"
    blocks = [paragraph(rng, 6), code(rng, 12), lead, name, description, paragraph(rng, 3)]
    chunks = chunk_document(doc([Section(["Flags"], blocks)]), target_chars=900, max_chars=2000,
                            overlap_chars=0)
    holder = next(c for c in chunks if description[:60] in c.content)
    assert f"{lead}\n\n{name}" in holder.content, [c.content[-80:] for c in chunks]
    # A name over a code block goes with the code when the code goes on to the prose explaining it.
    snippet = "```toml\n" + "\n".join(f"option_{i} = true" for i in range(20)) + "\n```"
    blocks = [paragraph(rng, 3), "`pyproject.toml`", snippet, description]
    chunks = chunk_document(doc([Section(["Config"], blocks)]), target_chars=300, max_chars=1100,
                            overlap_chars=0)
    holder = next(c for c in chunks if snippet in c.content)
    assert f"`pyproject.toml`\n\n{snippet}" in holder.content, [c.content[-80:] for c in chunks]


def test_a_long_table_is_cut_between_rows_and_every_piece_keeps_its_header() -> None:
    rows = [f"| option{i} | what option {i} does, in a few words |" for i in range(60)]
    table = "\n".join(["| name | meaning |", "|---|---|", *rows])
    page = doc([Section(["Options"], ["Options:", table])])
    chunks = chunk_document(page, target_chars=800, max_chars=1200)
    assert len(chunks) > 2
    assert chunks[0].content.startswith("Options:\n\n| name | meaning |\n|---|---|\n| option0 ")
    for chunk in chunks[1:]:
        assert chunk.content.startswith("| name | meaning |\n|---|---|\n| option")  # no row carried over
    quoted = [line for c in chunks for line in c.content.split("\n") if line.startswith("| option")]
    assert quoted == rows  # every row once, in order


def test_a_table_padded_to_align_is_cut_between_rows_under_its_compact_header() -> None:
    wide = 700
    header = f"| {'Field'.ljust(wide)} | Default |\n|:{'-' * wide}-|:--------|"
    said = "What the option does, said at some length, as reference tables do for every setting they list."
    rows = [f"| `option{i}` {' ' * 40}| {said} {' ' * 300}| {i}  |" for i in range(24)]
    chunks = chunk_document(doc([Section(["Options"], ["\n".join([header, *rows])])]), target_chars=1200,
                            max_chars=2000)
    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.content.startswith("| Field | Default |\n|:---|:---|\n| `option"), chunk.content[:80]
        assert "  " not in chunk.content
    assert [line.split("`")[1] for c in chunks for line in c.content.split("\n")[2:]] == [
        f"option{i}" for i in range(24)]


def test_a_table_under_a_line_of_text_is_cut_between_rows_under_its_header() -> None:
    # GFM lets a table interrupt a paragraph: "The options:" sits on the line above its header.
    rows = [f"| `option{i}`      | what option {i} does, in a few words      |" for i in range(60)]
    header = ["| name        | meaning      |", "|-------------|--------------|"]
    page = parse_markdown("\n".join(["# Options", "", "The options:", *header, *rows]))
    chunks = chunk_document(doc(page.sections), target_chars=800, max_chars=1200)
    assert chunks[0].content.startswith("The options:\n\n| name | meaning |\n|---|---|\n| `option0` ")
    for chunk in chunks[1:]:
        assert chunk.content.startswith("| name | meaning |\n|---|---|\n| `option"), chunk.content[:60]
    quoted = [line for c in chunks for line in c.content.split("\n") if line.startswith("| `option")]
    assert len(quoted) == 60


def _blocks(markdown: str) -> list[str]:
    return parse_markdown(f"# T\n\n{markdown}\n").sections[0].blocks


def test_a_table_opens_a_block_of_its_own_where_it_starts_and_closes_it_where_its_rows_end() -> None:
    assert _blocks("a | b\n|---|---|\n| 1 | 2 |") == ["a | b\n|---|---|\n| 1 | 2 |"]
    assert _blocks("Use it:\na | b\n--- | ---\n1 | 2\nThen run it.") == [
        "Use it:", "a | b\n--- | ---\n1 | 2", "Then run it."]
    assert _blocks("no table | here\nat all") == ["no table | here\nat all"]
    # A table's own row of dashes ("n/a") under another row is no new table's header.
    whole = "| Option | Default |\n|---|---|\n| foo | bar |\n| - | - |\n| baz | qux |"
    assert _blocks(whole) == [whole]


def test_a_long_run_of_spaces_in_a_table_is_shrunk_at_once() -> None:
    # A run not ending at a pipe: 90 s when every one of its spaces started a new try.
    table = "| a | b |\n|---|---|\n| x" + " " * 100_000 + "x |\n| y" + " " * 100_000 + "| z |"
    chunks = chunk_document(doc([Section(["T"], [table])]))
    assert "| y | z |" in "".join(c.content for c in chunks)


def test_a_line_of_pipes_is_no_table_and_cut_at_once() -> None:
    chunks = chunk_document(doc([Section(["Pipes"], ["a|" * 50_000])]))  # 5.6 s when read as a table
    assert "".join(c.content for c in chunks).count("a|") >= 50_000
