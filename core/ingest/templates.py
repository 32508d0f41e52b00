"""Static-site template tags (GitBook and Jekyll's ``{% %}``, Hugo's shortcodes) -> plain Markdown.

GitBook writes a note as ``{% hint style="warning" %}`` ... ``{% endhint %}`` and tabs as
``{% tab title="Windows" %}``; Hugo writes ``{{< alert title="Note" >}}`` ... ``{{< /alert >}}``;
Jekyll pages hold ``{% include %}`` and ``{% raw %}`` lines. Read as plain Markdown, the tags
stayed in the text, were searched, and were quoted in answers. Here a line holding only a tag
goes: a block tag's content stays, led by what a reader sees (its ``title``, else its kind,
"Warning:"), as MkDocs' notes are (``core.ingest.mkdocs``); other tags (includes, tables of
contents) are left out, their files not being there to read. A note's tag opening a line of
prose (``{{% warning %}} If you ...``), or a closing tag ending one, is read as if on its own
line; Hugo's ``ref`` and ``relref`` (``[cli]({{< relref "cli#install" >}})``) read as the page
they name, as the site shows them. Other Hugo tags inside a line of prose show what they say
(``text="Pod"``, their arguments, else a placeholder naming them); anything in code (fences or
spans) is left as written.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from core.ingest.document import with_lead
from core.ingest.fences import Fences, fence_opening, tags_joined
from core.ingest.inline import attribute
from core.ingest.markdown import titled_fence
from core.ingest.spans import outside_code_spans

#: A line that is one tag: ``{% name args %}`` (``{%-`` trims), ``{{< name args >}}``, ``{{% name %}}``.
_TAG = re.compile(
    r"^[ \t]*(?:\{%-?[ \t]*(?P<liquid>[\w-]+)(?P<largs>.*?)-?%\}"
    r"|\{\{[<%](?!/\*)[ \t]*(?P<close>/)?[ \t]*(?P<hugo>[\w/.-]+)(?P<hargs>.*?)[>%]\}\})[ \t]*$"
)
_ONE_TAG = r"(?:\{%-?[ \t]*[\w-]+.*?-?%\}|\{\{[<%].*?[>%]\}\})"
_SIGNS = re.compile(rf"^[ \t]*{_ONE_TAG}[ \t]*$|\{{\{{[<%](?:[ \t]*/?[ \t]*[\w.-]|/\*)", re.M)
#: A note's tag opening a line of prose, or a closing tag ending one: each is read as a line of its
#: own. Other tags in prose ("{{< kbd "Ctrl" >}} + C copies") stay where they are.
_OPENS_LINE = re.compile(
    r"^([ \t]*(?:\{%-?[ \t]*(?P<liquid>[\w-]+)[^%\n]*?-?%\}|\{\{[<%][ \t]*(?P<hugo>[\w-]+)[^>%\n]*[>%]\}\}))"
    r"[ \t]+(?=\S)")
_CLOSES_LINE = re.compile(
    r"(?<=\S)[ \t]+(\{%-?[ \t]*end[\w-]*[ \t]*-?%\}|\{\{[<%][ \t]*/[^{}\n]*?[>%]\}\})[ \t]*$")
#: Hugo's link to a page: ``{{< relref "cli#install" >}}`` -> ``cli#install``.
_REF = re.compile(r"""\{\{[<%][ \t]*(?:rel)?ref[ \t]+(?:"([^"\n]*)"|'([^'\n]*)'|([^\s>%]+))[ \t]*[>%]\}\}""")
#: A Hugo tag inside a line (not an escaped one, ``{{</* x */>}}``, which shows the tag).
_INLINE_TAG = re.compile(
    r"\{\{[<%](?!/\*)[ \t]*(?P<close>/)?[ \t]*(?P<name>[\w.-]+)(?P<args>[^{}\n]*?)[>%]\}\}")
#: Hugo's own tags embedding a video or a post by its id: a picture, no words.
_EMBEDS = frozenset({"youtube", "vimeo", "gist", "tweet", "x", "instagram"})
#: Docsy's ``text=true``: the tab (or every tab of the pane) holds text, whatever its ``lang``.
_TEXT = re.compile(r"""\btext\s*=\s*["']?true\b""")
#: Hugo's escaped tag, which its docs use to show one: ``{{</* name */>}}`` and ``{{%/* name */%}}``.
_ESCAPED = re.compile(r"(\{\{[<%])/\*|\*/([>%]\}\})")
#: A Hugo tag opening a line, and the end of one: a tag may run over lines (``tags_joined``).
_TAG_OPENS = re.compile(r"^[ \t]*\{\{[<%][ \t]*[\w/.-]")
_TAG_ENDS = re.compile(r"[>%]\}\}")
#: Tags whose content the site never shows (Docsy's ``{{< comment >}}``).
_HIDDEN = frozenset({"comment"})
#: A site's own tags showing code, named so: ``{{< code >}}``, ``{{< code-toggle >}}``, ``{{< codeblock >}}``.
_CODE_TAG = re.compile(r"(?:[\w.]+[-_])?code(?:block)?(?:[-_][\w.]+)?")
#: Tags that are notes: their kind ("Warning:") leads their content when they have no title.
_NOTES = frozenset("hint alert notice callout admonition note tip warning info danger caution".split())
#: Blocks nested deeper than this are read as plain text: the page must not exhaust the stack.
_MAX_DEPTH = 20


def looks_like_templates(text: str) -> bool:
    """Whether ``text`` has a line holding only a template tag."""
    return _SIGNS.search(text) is not None


def templates_to_markdown(
    text: str, *, depth: int = 0, as_text: bool = False, lang: str | None = None,
    labels: Sequence[str] = (),
) -> str:
    """Rewrite tag-only lines: block tags as their labelled content, the rest left out.

    ``as_text``: the enclosing tag says its content is text (Docsy's ``{{< tabpane text=true >}}``);
    ``lang``: the language it gives the code of its tabs (``{{< tabpane lang="yaml" >}}``);
    ``labels``: the names it gives its tabs in order (``{{< tabs Self-hosted Kubernetes >}}``).
    """
    lines = _own_lines(text.split("\n")) if depth == 0 else text.split("\n")
    closing = _pairs(lines)
    out: list[str] = []
    fences = Fences()
    i = blocks = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if fences.code(line) or (tag := _TAG.match(line)) is None:  # code and prose: as written
            out.append(line)
        elif depth < _MAX_DEPTH and (end := closing.get(i - 1)) is not None:
            label = labels[blocks] if blocks < len(labels) else None
            out.extend(_block(tag, lines[i:end], depth=depth, as_text=as_text, lang=lang, label=label))
            blocks += _name(tag) not in _HIDDEN  # a comment among tabs is none of them
            i = end + 1
    return _unescaped("\n".join(out)) if depth == 0 else "\n".join(out)


def _block(
    tag: re.Match[str], inside: list[str], *, depth: int, as_text: bool, lang: str | None,
    label: str | None = None,
) -> list[str]:
    """A block tag and what it holds as a reader sees them: labelled text or code, or nothing.

    ``label``: the name its enclosing tag gives it, when it names itself none.
    """
    if _name(tag) in _HIDDEN:
        return []
    shown = _label(tag) or (f"{label}:" if label else "")
    text_inside = as_text or _TEXT.search(tag["hargs"] or "") is not None
    holds_blocks = _holds_blocks(inside)
    language = _code_language(tag, holds_blocks=holds_blocks)
    language = lang if language is None else language
    if holds_blocks:  # a pane of tabs: its language is theirs, and maybe their names
        body = templates_to_markdown("\n".join(inside), depth=depth + 1, as_text=text_inside, lang=language,
                                     labels=_tab_names(tag, inside))
    elif not text_inside and language is not None and not any(fence_opening(row) for row in inside):
        # A tab of code: its label goes with it as the fence's title (shown above it), never alone.
        fence = titled_fence(f"```{language}", shown.removesuffix(":"))
        # The code without the indentation it shares under its tag.
        return ["", fence, *textwrap.dedent("\n".join(inside)).split("\n"), "```", ""]
    else:
        body = templates_to_markdown("\n".join(inside), depth=depth + 1, as_text=text_inside)
    body = body.strip("\n")
    return ["", *with_lead(shown, body.split("\n") if body else []), ""]


#: A tag's arguments one by one: ``name="value"`` (or ``name=value``), else a quoted or bare word.
_ARGUMENT = re.compile(r"""[\w-]+\s*=\s*(?:"[^"\n]*"|'[^'\n]*'|\S+)|"([^"\n]*)"|'([^'\n]*)'|(\S+)""")


def _positional(args: str) -> list[str]:
    """The arguments of a tag given without a name, in order: ``".NET" Go`` in ``{{< tabs ".NET" Go >}}``."""
    return [next(part for part in match.groups() if part is not None) for match in _ARGUMENT.finditer(args)
            if any(part is not None for part in match.groups())]


def _tab_names(tag: re.Match[str], inside: list[str]) -> list[str]:
    """The names a pane gives its tabs in order, when it names as many as it holds tabs naming none.

    Dapr's ``{{< tabs Self-hosted Kubernetes >}}`` over two ``{{% codetab %}}``: read without them,
    the two tabs' near-identical commands could not be told apart. Hugo Book's ``{{< tabs "id" >}}``
    names no tab (its one argument is an id; each ``{{< tab "macOS" >}}`` names itself). A comment
    among the tabs is none of them.
    """
    names = _positional(tag["hargs"] or "")
    pairs, tabs, end = _pairs(inside), [], -1
    for start in sorted(pairs):
        if start > end:  # a tab of the pane, not a tag inside one
            tabs.append(_TAG.match(inside[start]))
            end = pairs[start]
    shown = [t for t in tabs if t is not None and _name(t) not in _HIDDEN]
    # One argument over one tab is as likely the pane's id as the tab's name.
    named = len(names) >= 2 and len(names) == len(shown) and not any(_label(t) for t in shown)
    return names if named else []


def _holds_blocks(inside: list[str]) -> bool:
    """Whether these lines hold a Hugo block tag with its closing tag (a pane's tabs).

    A tag-shaped line in a tab of code (Liquid's ``{% if %}``, ``{{< figure >}}`` shown as
    HTML) is code, not a tab.
    """
    return any((tag := _TAG.match(inside[k])) is not None and tag["hugo"] for k in _pairs(inside))


def _code_language(tag: re.Match[str], *, holds_blocks: bool = False) -> str | None:
    """The language of a block tag whose content is code, else None.

    Hugo's ``{{< highlight toml >}}``, a tag named for code (``{{< code-toggle >}}``) and a tab or
    card saying ``lang="yaml"`` (Docsy) show their content as a code block: read as prose, a
    ``# comment`` in it became a heading. Docsy's ``text=true`` says the content is text after all
    (``lang`` then names a language people speak).
    """
    args = tag["hargs"] or ""
    language = attribute(args, "lang")
    if _name(tag) == "highlight":
        first = next(iter(args.split()), "")
        return first.strip("\"'") if "=" not in first else ""
    if language is None and _CODE_TAG.fullmatch(_name(tag)) and not holds_blocks:
        return ""  # a site's own code tag (Hugo's docs' ``code-toggle``); a pane of tabs holds tabs
    return None if language is None else language.strip()


def _unescaped(text: str) -> str:
    """Hugo's escaped tags as the site shows them: ``{{</* alert */>}}`` is ``{{< alert >}}``."""
    return _ESCAPED.sub(lambda m: m[1] or m[2], text) if "/*" in text else text


def _own_lines(lines: list[str]) -> list[str]:
    """Outside code: a tag opening or closing a line of prose on a line of its own, refs as their page."""
    out: list[str] = []
    # A tag written over several lines (one argument a line) is one tag.
    for line, code in tags_joined(lines, opens=_TAG_OPENS, ends=_TAG_ENDS, marker="{{"):
        if code:
            out.append(line)
            continue
        # A ref written in a code span is shown, not followed.
        line = outside_code_spans(line, lambda part: _REF.sub(lambda m: m[1] or m[2] or m[3] or "", part))
        opening = _OPENS_LINE.match(line)
        if opening is not None and (opening["liquid"] or opening["hugo"] or "").lower() in _NOTES:
            out.append(opening[1])
            line = line[opening.end():]
        closing = _CLOSES_LINE.search(line)
        if closing is not None and _TAG.match(line) is None:
            out.extend([outside_code_spans(line[:closing.start()], _inline_tags), closing[1]])
        else:
            out.append(outside_code_spans(line, _inline_tags))
    return out


def _inline_tags(prose: str) -> str:
    """Hugo's tags inside a line of prose as the site shows them, as far as the tag says.

    ``{{< glossary_tooltip text="Pod" >}}`` shows "Pod", ``{{< kbd "Ctrl" >}}`` "Ctrl"; Hugo's
    ``{{% param version %}}`` a setting's value, which stands as `` `<version>` ``; a tag saying
    nothing shown (``{{% latest-version long="true" %}}``) and a pair's tags around their words go.
    Read as written, the tag's syntax was quoted and its name and arguments were searched as words.
    """
    if "{{" not in prose or _TAG.match(prose):
        return prose
    closed = {m["name"].lower() for m in _INLINE_TAG.finditer(prose) if m["close"]}
    return _INLINE_TAG.sub(lambda m: _shown_inline(m, pairs=closed), prose)


def _shown_inline(tag: re.Match[str], *, pairs: set[str]) -> str:
    args = (tag["args"] or "").rstrip().removesuffix("/")  # ``{{< new-in 0.144.0 />}}`` closes itself
    if tag["close"] or tag["name"].lower() in pairs:  # a pair's words stay, after its title if any
        title = None if tag["close"] else attribute(args, "title")
        return f"{' '.join(title.split())}: " if title and title.strip() else ""
    if tag["name"].lower() in _EMBEDS:
        return ""
    if tag["name"] == "param":  # Hugo's own: a value of the site's settings, which the page cannot say
        key = " ".join(_positional(args))
        return f"`<{key}>`" if key else ""  # a code span keeps the <>
    shown = attribute(args, "text") or " ".join(_positional(args))
    return " ".join(shown.split())


def _name(tag: re.Match[str]) -> str:
    return (tag["liquid"] or tag["hugo"] or "").lower()


def _pairs(lines: list[str]) -> dict[int, int]:
    """Map each block tag's line to the line closing it (``{% endhint %}``, ``{{< /alert >}}``).

    One pass with a stack per name, so a page of many unclosed tags (includes) stays linear.
    Code fences are skipped: a tag shown in code neither opens nor closes anything.
    """
    open_at: dict[str, list[int]] = {}
    pairs: dict[int, int] = {}
    fences = Fences()
    for k, line in enumerate(lines):
        if fences.code(line) or (tag := _TAG.match(line)) is None:
            continue
        name = _name(tag)
        closes = name.removeprefix("end") if tag["liquid"] and name.startswith("end") else None
        if tag["close"] or closes is not None:
            stack = open_at.get(closes or name)
            if stack:
                pairs[stack.pop()] = k
        else:
            open_at.setdefault(name, []).append(k)
    return pairs


def _label(tag: re.Match[str]) -> str:
    """What a reader sees before the content: the title, else a note's kind or style ("Warning:")."""
    args = tag["largs"] or tag["hargs"] or ""
    title = attribute(args, "title")
    title = attribute(args, "header") if title is None else title  # Docsy's tabs and cards
    if title is not None:
        return f"{title.strip()}:" if title.strip() else ""
    named = next((arg.strip() for arg in _positional(args) if arg.strip()), "")
    if _name(tag).endswith("tab") and named and not tag["liquid"]:
        return f"{named}:"  # Hugo Book's {{< tab "macOS" >}}
    if _name(tag) in _NOTES:
        style = attribute(args, "style") or attribute(args, "type") or attribute(args, "color")
        first = next(iter(args.split()), "")  # Hugo's ``{{% notice tip %}}`` names its kind first
        positional = first if "=" not in first else ""
        kind = (style or positional or _name(tag)).strip().strip("\"'")
        return f"{kind.capitalize()}:" if kind else ""
    return ""
