"""Word-level text helpers shared by the extractive answerer and grounding.

Pure functions: tokenising, a light suffix-stripping stemmer and a stop-word
list. The stemmer only needs to be *consistent* (the same word form maps to the
same stem on both sides of a comparison), not linguistically exact, so it is a
handful of suffix rules rather than a dependency.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Words, numbers (with decimals like 2.5 or versions like 3.11) and contractions.
_TOKEN_RE = re.compile(r"[A-Za-z0-9]+(?:[.'’][A-Za-z0-9]+)*")
_NUMBER_RE = re.compile(r"^\d+(?:\.\d+)*$")
#: English phrasing that points at the next block ("add the following script", "as shown below"):
#: a sentence ending so introduces a list or command, like one ending in a colon.
_POINTS_AHEAD_RE = re.compile(r"\b(?:the following|as follows|below|like this|this command)\b", re.IGNORECASE)
#: Words that open prose continuing the one before ("This tool ...", "However, ...", "It ...",
#: "With this setting, ...": a preposition before the pointing word points back all the same).
_POINTS_BACK_RE = re.compile(
    r"^\W*(?:(?:this|these|that|those|it|its|they|their|them|such|however|otherwise|instead|then|but|also"
    r"|therefore|thus|hence)\b"
    r"|(?:with|in|for|by|after|from|without|because\s+of|unlike)\s+(?:this|that|these|those|such|it)\b"
    # "For those who are new", "In this tutorial you will": the reader or the page, not the block before.
    r"(?!\s+(?:who|which|tutorial|guide|section|page|chapter|document|article|release|version)\b))",
    re.IGNORECASE)

_STOPWORD_TEXT = """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each either etc few for from further get gets got had hadn't
    has hasn't have haven't having he her here hers herself him himself his how however i if in
    into is isn't it it's its itself just let let's like may me might more most much must my
    myself need needs no nor not now of off on once one only or other our ours ourselves out over
    own per please same shall she should shouldn't so some such than that that's the their theirs
    them themselves then there there's these they this those through thus to too under until up
    upon us use used uses using very via was wasn't we were weren't what what's when where which
    while who whom whose why will with within without won't would wouldn't yes yet you your yours
    yourself yourselves e.g i.e eg ie i'm i've i'd i'll you're you've you'd you'll we're we've we'd
    we'll they're they've they'd they'll he's she's
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

#: Negation cues: a sentence that negates what its evidence affirms is not supported by it.
NEGATIONS: frozenset[str] = frozenset(
    {"not", "no", "never", "cannot", "can't", "don't", "doesn't", "isn't", "aren't", "won't",
     "wasn't", "weren't", "shouldn't", "couldn't", "didn't", "hasn't", "haven't", "neither",
     "nor"}
)


def introduces_next(text: str) -> bool:
    """True for prose that introduces the block after it ("Run the following command:")."""
    text = text.rstrip()
    return text.endswith(":") or bool(_POINTS_AHEAD_RE.search(text[-160:]))


#: Openings that carry a passage on to its next step ("For that, use ...", "In this case, ...",
#: "To do so, ...") or turn it ("But there are cases in which `UploadFile` ...", "However, ..."),
#: or give the remedy for the problem just told ("To solve the problem, ...", "A common solution
#: is to use ..."), not prose that merely mentions what came before ("This page also ...").
_CARRIES_ON_RE = re.compile(
    r"^\W*(?:(?:for|in|with|after)\s+(?:this|that|these|those|it)(?:\s+(?:case|cases|purpose))?"
    r"|to\s+do\s+(?:this|that|so)|then|instead"
    r"|to\s+(?:solve|fix|avoid|prevent|resolve|address|work\s+around)"
    r"\s+(?:this|that|these|it|the\s+\w+)(?:\s+\w+)?)"
    r"\s*,|^\W*(?:but|however)\b"
    r"|^\W*(?:a|the|one)\s+(?:common\s+|simple\s+|possible\s+|usual\s+|recommended\s+)?"
    r"(?:solution|fix|workaround|remedy)\s+(?:is|would\s+be)\b", re.IGNORECASE)


def carries_on(text: str) -> bool:
    """True for prose that goes on with what the block before said ("For that, use `fallback`:")."""
    return bool(_CARRIES_ON_RE.match(text))


def refers_back(text: str) -> bool:
    """True for prose that opens by pointing at what came before ("This tool will help you...")."""
    return bool(_POINTS_BACK_RE.match(text))


#: A span the writer put in quotes or backticks ('reality gap', "duty factor", `uv add`).
_QUOTED_RE = re.compile(r"""(?:^|[\s(\[])['"\u2018\u201c`]([^'"\u2019\u201d`\n]{3,80})['"\u2019\u201d`]""")


#: A code name typed in a question: a flag ("--frozen"), an identifier with an underscore
#: ("x_client_id", "IGN_GAZEBO_RESOURCE_PATH"), a call ("Header()"), a dotted name ("api.insecure",
#: "acme.json"; each part two letters or more, so "e.g." is none) or a camelCase one ("keyType").
TYPED_NAME = re.compile(r"(?<![\w.-])(--?[A-Za-z][\w-]++|[A-Za-z][A-Za-z0-9]*+(?:_++[A-Za-z0-9]++)++|\w++\(\)"
                        r"|[a-z][a-z0-9]++(?:\.[a-z][A-Za-z0-9_]++)++"
                        r"|[a-z][a-z0-9]*+(?:[A-Z][a-z0-9]++)++)(?![\w-])")


#: A file's name ("uv.lock", "pyproject.toml") or a host's ("github.com"): a product's own files,
#: and the sites it links to, are named on page after page of its docs, so naming one says nothing
#: of what is asked, as a setting's dotted name does.
_FILE_NAME = re.compile(r"\.(?:lock|toml|json|ya?ml|py|md|txt|cfg|ini|conf|js|mjs|cjs|ts|tsx|jsx|sh|rst"
                        r"|html?|css|xml|env|log|lst|csv|com|org|net|io|dev|ai|app|co|edu|gov|info|me|us|uk"
                        r"|de)$")


def typed_names(question: str) -> list[re.Pattern[str]]:
    """Patterns finding each code name ``question`` types, as a whole name ("--locked", not "--locked-x").

    A file's or a host's name is none (``_FILE_NAME``).
    """
    names = dict.fromkeys(m.lower() for m in TYPED_NAME.findall(question) if not _FILE_NAME.search(m.lower()))
    return [re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE) for name in names]


def quote_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` quotes something: the (start, end) of each span, quote marks included."""
    return [(m.start(1) - 1, m.end(1) + 1) for m in _QUOTED_RE.finditer(text)]


def quoted_phrases(text: str, *, min_terms: int = 2) -> list[str]:
    """The phrases ``text`` quotes of at least ``min_terms`` words, as many of them content words.

    People quote the term they ask about ("prof keeps saying 'reality gap'"); a single
    quoted word says less, since most words occur somewhere in any collection.
    Lower-cased, spaces collapsed, punctuation trimmed from the ends ('reality gap?').
    """
    spans = (" ".join(text[start + 1:end - 1].lower().split()).strip(" .,;:!?")
             for start, end in quote_spans(text))
    # Words, not tokens: a quoted identifier (`use_sim_time`, 'uv.lock') is one name, not a phrase.
    return [span for span in spans
            if len(span.split()) >= min_terms and len(content_terms(span)) >= min_terms]


#: A line that is only a code name: an option, with its argument or alias after it
#: ("`-n NUMBER, --num-workers NUMBER`"), or one word of code starting with a letter
#: ("`warn_unused_ignores`"), as reStructuredText's ``.. option::`` and many reference pages head
#: the entry described under it. A command ("`npm run build`"), a number, a path ("`./cache`")
#: or an address is no name.
_NAME_LINE_RE = re.compile(r"`(?:--?[A-Za-z][^`\n]{0,77}|(?!\w+://)[A-Za-z_$][^`\s]{0,79})`")
#: Values a line of their own may hold after "Default:": what an entry is set to, not its name.
LITERALS = frozenset("true false null none nil yes no on off undefined".split())


def names_entry(line: str) -> bool:
    """Whether ``line`` is only a code name, the name of the entry written under it."""
    line = line.strip()
    return _NAME_LINE_RE.fullmatch(line) is not None and line.strip("`").casefold() not in LITERALS


def tokens(text: str) -> list[str]:
    """Split text into lower-cased word and number tokens.

    Args:
        text: Any text.

    Returns:
        Tokens in order; apostrophes are normalised to ``'``.
    """
    return [t.lower().replace("’", "'") for t in _TOKEN_RE.findall(text)]


#: A compound code name written in camelCase or PascalCase ("minResponseBodyBytes", "HTMLResponse"),
#: and the words it is made of ("HTML", "Response"; digits stay with their word).
_COMPOUND_RE = re.compile(r"\b[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b")
_PART_RE = re.compile(r"[A-Z]+[0-9]*s?(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+")


def with_name_parts(text: str) -> str:
    """``text`` with the words of each compound code name written after it ("nodeLinker node Linker").

    People ask about a setting in words ("a min size before it compresses") that the docs
    only write as one name (``minResponseBodyBytes``); an excerpt reading the name as one word
    never meets them. All capitals ("HTTP", "URLs") and a single capital ("Docker") make no
    compound, and a one-letter part is left out ("iPhone", "IPv6" give no words). Search reads
    the name whole: indexing its words too answered more off-topic questions (BENCHMARKS.md,
    "Twenty-fifth pass").
    """
    def spelled(match: re.Match[str]) -> str:
        parts = [part for part in _PART_RE.findall(match.group()) if len(part) > 1]
        return f"{match.group()} {' '.join(parts)}" if len(parts) > 1 else match.group()

    return _COMPOUND_RE.sub(spelled, text)


def is_number(token: str) -> bool:
    """Return True for tokens such as ``30``, ``2.5`` or ``3.11``."""
    return bool(_NUMBER_RE.match(token))


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """Strip common English inflection suffixes from a lower-case word.

    Args:
        word: One lower-case token.

    Returns:
        The stem; numbers and short words are returned unchanged.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, repl, min_len in _SUFFIXES:
        if suffix == "ly" and word.endswith("ply"):
            continue  # "apply", "reply", "supply" are verbs ("applies" -> "apply"), not adverbs of "app"
        if word.endswith(suffix) and len(word) - len(suffix) >= min_len:
            base = word[: len(word) - len(suffix)] + repl
            # "running" -> "runn" -> "run": undo a doubled final consonant.
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]
            return _drop_e(base)
    return _drop_e(word)


def _drop_e(word: str) -> str:
    # "simulate", "simulates", "simulated" must meet at one stem: drop a final "e".
    return word[:-1] if len(word) >= 4 and word.endswith("e") else word


# Ordered longest first; (suffix, replacement, minimum stem length left).
_SUFFIXES: tuple[tuple[str, str, int], ...] = (
    ("ational", "ate", 3),
    ("ization", "ize", 3),
    ("isation", "ize", 3),
    ("fulness", "ful", 3),
    ("ousness", "ous", 3),
    ("iveness", "ive", 3),
    ("ations", "ate", 3),
    ("ation", "ate", 3),
    ("ments", "", 4),
    ("ment", "", 4),
    ("ingly", "", 3),
    ("ities", "ity", 3),
    ("ically", "ic", 3),
    ("ally", "al", 3),
    ("ness", "", 3),
    ("ings", "", 3),
    ("ing", "", 3),
    ("ies", "y", 2),
    ("ied", "y", 2),
    ("sses", "ss", 2),
    ("ed", "", 3),
    ("ly", "", 4),  # not "early" -> "ear"
    ("es", "e", 3),
    ("s", "", 3),
)


def _keep_s(word: str) -> bool:
    return word.endswith(("ss", "us", "is", "ous"))


def content_terms(text: str) -> list[str]:
    """Return the stemmed non-stop-word tokens of ``text``, in order.

    Args:
        text: Any text.

    Returns:
        Stems of content words and numbers (duplicates kept).
    """
    out: list[str] = []
    for tok in tokens(text):
        if tok in STOPWORDS:
            continue
        if tok.endswith("s") and _keep_s(tok):
            out.append(tok)
            continue
        out.append(stem(tok))
    return out


def stemmed_tokens(text: str) -> list[str]:
    """Return every token of ``text`` stemmed, stop words included (for bigrams)."""
    return [tok if (tok.endswith("s") and _keep_s(tok)) else stem(tok) for tok in tokens(text)]
