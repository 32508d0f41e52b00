"""How a passage grows around the block that answers best: its lead-in, its body, its next step.

A block alone rarely answers: "Run the following command:" needs its command, a command its
introduction, an option's name what the option does, a tab its other tabs. Pure functions over
one chunk's quotable blocks (``core.answer.units``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.blocks import LABEL_CHARS, Block, top_items
from core.answer.units import Unit, prose_chars
from core.retrieval.terms import introduces_next

#: Characters of prose after which an answer adds no more parts, and up to which one part takes
#: the passage's next step (a lead-in's list or command, an example, "For that, use ...").
EXCERPT_CHARS = 650
#: A lead-in this short comes along with the code it introduces when the code explains the best
#: block; a longer one is a passage of its own, which would crowd out the rest of the answer.
LEAD_IN_CHARS = 200
#: Characters of prose up to which one part takes the blocks of its section that share the
#: question's words. Until the tenth pass it was EXCERPT_CHARS: a page retelling the problem in
#: the question's words filled the answer, and the block naming the setting that solves it had no
#: room. Capping later parts by what the answer has left was measured too and lost two facts
#: (BENCHMARKS.md, tenth pass).
GROW_CHARS = 300
#: The most of a list left unquoted that is quoted because a lead-in promised the list ("Valid options:").
PROMISED_REST_CHARS = 200
#: A tab of code this short (a command for another system or package manager) comes with the tab
#: quoted (``_next_tab``).
TAB_CODE_LINES = 5
#: Tabs of one group quoted at most (npm, pnpm, yarn, bun; macOS, Linux, Windows).
MAX_TABS = 5
#: A code block's title that names its file ("astro.config.mjs", "src/App.tsx"): no tab. "Node.js",
#: "macOS/Linux" and "v2.x" are tabs.
_FILE_NAME = re.compile(r"^(?:(?:[\w.@~-]+/)+[\w.@~-]+\.[A-Za-z]\w{1,4}|[a-z0-9_.@~-]*\.[a-z][a-z0-9]{1,4})$")


#: A field's line: a capitalised name of a word or two, a colon, its value on the same line.
_FIELD = re.compile(r"[A-Z][a-z]+(?: [a-z]+)?: \S[^\n]*$")


def grow(units: Sequence[Unit], best: int, weights: dict[str, float]) -> list[Unit]:
    """The best unit plus its lead-in and the body it introduces, then what follows in its section.

    Blocks sharing the question's words follow while the part is under GROW_CHARS of prose; the
    passage's next step (an example, what a lead-in introduces, "For that, ...") while it is under
    EXCERPT_CHARS.
    """
    start, end = best, best + 1
    # What comes before a section's first block belongs to another section; a chunk's cut first
    # words (the overlap's tail) read as a fragment, whatever they would lead in.
    overlap = best > 0 and units[best - 1].cut and units[best - 1].position == 0
    before = units[best - 1].block if best > 0 and not units[best].opens_section and not overlap else None
    if before is not None and (
        (units[best].block.is_body and before.kind == "para")  # what the list or command is for
        or (units[best].block.kind == "para" and before.kind == "code"  # code first, then its explanation
            and before.text.count("\n") <= 16)
        # "This tool ..." names its tool the block before (a chunk's cut first words do not)
        or (units[best].block.continues and before.kind in ("para", "list") and not units[best - 1].cut)
    ):
        start = best - 1
        if (units[start].block.kind == "code" and start > 0 and not units[start].opens_section
                and units[start - 1].block.kind == "para" and not units[start - 1].cut
                and prose_chars(units[start - 1].block) <= LEAD_IN_CHARS):
            # and the sentence introducing that code, as a code block chosen first brings it:
            # "use the dependency-only mode:", or "Add the `-v 4` flag for verbose output."
            start -= 1
    start = min(start, _label_above(units, start))
    # Never past the next heading either: its blocks answer under a title the excerpt leaves out.
    if same_section(units, end) and units[end].block.is_body and units[end - 1].block.kind == "para":
        end += 1  # "Run the following command:" without the command answers nothing
    elif (same_section(units, end) and same_section(units, end + 1) and units[end + 1].block.is_body
          and units[end].block.is_lead_in):
        end += 2  # the next sentence introduces the list or command
    size = sum(prose_chars(u.block) for u in units[start:end] if u.block.kind != "code")
    while same_section(units, end) and size < EXCERPT_CHARS:
        nxt = units[end]
        relevant = any(t in nxt.terms for t in weights)
        # A code block right after the explanation is usually its example.
        example = nxt.block.kind == "code" and units[end - 1].block.kind == "para"
        # "For that, use `fallback`:" is the passage's next step, whatever words it uses; so are the
        # code a list's last step introduces ("3. Create `ci.yml` with the following content:"), the
        # rest of a list a lead-in promised ("Valid options:") and the name of what the passage only
        # described ("This feature is available via `exclude-newer`").
        step = (example or units[end - 1].block.is_lead_in or nxt.block.carries_on
                or _says_nothing_yet(units[start:end], nxt)
                or (nxt.block.kind in ("code", "table") and _item_leads_in(units[end - 1].block))
                or _promised_item(units, start, end) or _next_tab(units, start, end)
                or _code_after_promised_list(units, start, end)
                or _names_what_was_described(units[start:end], nxt)
                or _procedure_goes_on(units, start, end))
        # The section's last block, sharing the question's words, finishes it while the part stays
        # short ("When making changes to the linked dep, restart ... with `--force`"); a lead-in whose
        # body is not quoted answers nothing, nor does a block under another merged part's label.
        last = (relevant and not nxt.block.is_lead_in and nxt.part == units[start].part
                and not same_section(units, end + 1) and size + prose_chars(nxt.block) <= EXCERPT_CHARS)
        if not (step or (relevant and size < GROW_CHARS) or last):
            break
        end += 1
        if nxt.block.kind != "code":
            size += prose_chars(nxt.block)
    return list(units[start:_without_dangling(units, best, end)])


def _without_dangling(units: Sequence[Unit], best: int, end: int) -> int:
    """``end`` moved back past the lead-ins ending a passage without what they introduce.

    "2. Then run:" or "Apply the tables with the command below:" whose command did not fit says
    nothing. A list of several items stays: its other steps are what was asked.
    """
    while end - 1 > best and units[end - 1].block.is_bare_lead_in:
        end -= 1
    return end


def _names_what_was_described(quoted: Sequence[Unit], nxt: Unit) -> bool:
    """Whether ``nxt`` names, in code, the thing the passage so far only described.

    "uv supports dependency cooldowns ..." then "This feature is available via the `exclude-newer`
    option": a reader asking how needs the name.
    """
    return (nxt.block.continues and "`" in nxt.block.text
            and not any(u.block.kind == "code" or "`" in u.block.text for u in quoted))


#: Blocks looked past for a procedure's next step (its command, a note inside the step).
STEP_GAP = 3


def _procedure_goes_on(units: Sequence[Unit], start: int, end: int) -> bool:
    """Whether ``units[end]`` belongs to a numbered procedure quoted since ``start``, up to its next step.

    Steps 1 and 2 of four set nothing up: a step's command, the note inside it and the next step
    come along while the answer is short. Only a procedure quoted from its first step, with
    commands: numbered points explaining something, or steps joined in the middle, are a list to
    pick from. It ends at another part's label, or at a lead-in to another list ("Removing it:").
    """
    quoted = [(i, steps) for i in range(start, end) if (steps := top_items(units[i].block))]
    if not quoted or quoted[0][1][0] != 1 or not any(u.block.kind == "code" for u in units[quoted[0][0]:end]):
        return False
    numbers = [n for _, steps in quoted for n in steps]
    # "1." on every item, as Markdown allows, goes on only where every step quoted was "1." too.
    expected = {numbers[-1] + 1} | ({1} if set(numbers) == {1} else set())
    for k in range(end, end + STEP_GAP + 1):
        if not same_section(units, k) or units[k].part != units[start].part:
            return False
        if steps := top_items(units[k].block):
            return steps[0] in expected
        if units[k].block.is_bare_lead_in and not (k + 1 < len(units) and units[k + 1].block.kind == "code"):
            return False
    return False


def _says_nothing_yet(quoted: Sequence[Unit], nxt: Unit) -> bool:
    """Whether ``nxt`` is the first sentence of a passage that so far only names and lists.

    A reference entry's name and its "Type: boolean" or "Default: `0`" lines say nothing of
    what the option does: the paragraph after them does, whatever words it uses; the next entry's
    name ("`--timeout`") says nothing of this one.
    """
    return (nxt.block.kind == "para" and not nxt.block.heads_entry and quoted[0].block.heads_entry
            and all(u.block.heads_entry or u.block.kind == "list" or _is_field(u.block) for u in quoted))


def _is_field(block: Block) -> bool:
    """A reference entry's one-line field: "Default: `0`", "Scope: `scrapy.depth`"."""
    short = block.kind == "para" and prose_chars(block) <= 2 * LABEL_CHARS
    return short and _FIELD.match(block.text) is not None


def _label_above(units: Sequence[Unit], start: int) -> int:
    """Where a passage starting at ``units[start]`` starts with the label naming its part.

    A reference entry ("href", then "**type:** `string`", then "The URL the button points
    to."; "`--no-import`", then "Stubgen will not try to import") says what it describes only in
    its label; a short line between them comes too.
    """
    if units[start].block.heads_entry:
        return start  # a name opens its own entry: the one above is another's
    for above in (start - 1, start - 2):
        if above < 0 or units[above + 1].opens_section:
            return start
        if units[above].block.heads_entry:
            between = units[above + 1:start]
            return above if all(prose_chars(u.block) <= 2 * LABEL_CHARS for u in between) else start
    return start


def _next_tab(units: Sequence[Unit], start: int, end: int) -> bool:
    """Whether ``units[end]`` opens another tab of the short tabbed code just quoted.

    Tabs are alternatives: "npm:" alone hides the pnpm and yarn commands a reader may need.
    A tab is short code titled by its tab (Docusaurus', Starlight's; a file's name is no tab),
    or under a label ("pip:", MkDocs' tabs); longer tabs are versions of one example, and one
    of them is enough. A group brings at most ``MAX_TABS``: a cheat sheet of labelled
    commands is no group of alternatives.
    """
    if not _is_tab(units, end - 1) or sum(_is_tab(units, i) for i in range(start, end)) >= MAX_TABS:
        return False
    if units[end].block.is_tab_label:
        return same_section(units, end + 1) and _is_tab(units, end + 1)
    return _is_tab(units, end)


def _is_tab(units: Sequence[Unit], i: int) -> bool:
    """Whether ``units[i]`` is short code in a tab: titled by a tab's name, or under a tab's label."""
    code = units[i].block
    if code.kind != "code" or code.text.count("\n") > TAB_CODE_LINES + 1:
        return False
    labelled = i > 0 and not units[i].opens_section and units[i - 1].block.is_tab_label
    return labelled or (bool(code.code_title) and not _FILE_NAME.match(code.code_title))


def _item_leads_in(block: Block) -> bool:
    """Whether a list ends with an item introducing what follows it."""
    return block.kind == "list" and introduces_next(block.text.rsplit("\n", 1)[-1])


def _promised_item(units: Sequence[Unit], start: int, end: int) -> bool:
    """Whether ``units[end]`` goes on with a list that a lead-in quoted since ``start`` introduced.

    The list is finished only when little of it is left (a few values or options, "Valid
    options:"): the rest of a long list is quoted for the items that share the question's
    words, as paragraphs are, and leaves room for the answer's other parts.
    """
    if units[end].block.kind != "list" or units[end - 1].block.kind != "list":
        return False
    first = end - 1
    while first > start and units[first - 1].block.kind == "list":
        first -= 1
    if first == start or not units[first - 1].block.is_lead_in:
        return False
    rest, k = 0, end
    while same_section(units, k) and units[k].block.kind == "list" and rest <= PROMISED_REST_CHARS:
        rest += prose_chars(units[k].block)
        k += 1
    return rest <= PROMISED_REST_CHARS


def _code_after_promised_list(units: Sequence[Unit], start: int, end: int) -> bool:
    """Whether ``units[end]`` is code right after a list that a lead-in quoted since ``start`` introduced.

    "Create a Compose file. This configuration:", what it does item by item, then the file:
    the list explains the code it comes before.
    """
    if units[end].block.kind != "code" or units[end - 1].block.kind != "list":
        return False
    first = end - 1
    while first > start and units[first - 1].block.kind == "list":
        first -= 1
    return first > start and units[first - 1].block.kind == "para" and units[first - 1].block.is_lead_in


def same_section(units: Sequence[Unit], i: int) -> bool:
    """Whether ``units[i]`` exists and continues the section of the unit before it."""
    return i < len(units) and not units[i].opens_section
