"""Query understanding: turn a chat message into the text worth searching.

People write in chat: mentions and markup, "whats", "w/", "lol", "8gb", typos.
``understand`` strips platform markup, expands chat spellings, leaves out filler
words, splits numbers from their units, and corrects words the collection does
not know to the nearest word it does (``core.retrieval.spelling``), leaving what
the writer quotes as it is;
an acronym the docs define but seldom use is searched with its long form, a versioned
name ("ros2") with the spelling the docs mostly use ("ROS 2"), and words typed apart with the
name the docs join them into ("key type": ``keyType``).
It also says when a message is only small talk ("thanks!", "hey, how's it going";
``core.retrieval.small_talk``), which deserves a friendly reply rather than a search.

Every list it uses (``core.retrieval.chat_words``) is about chat English in general, never
about one corpus.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from core.retrieval.chat_words import CHAT_ABBREVIATIONS, CHAT_FORMS, SHORTHAND
from core.retrieval.lexicon import JOINED_VERSION_RE, SPACED_VERSION_RE, Lexicon
from core.retrieval.small_talk import FILLER, is_small_talk, without_acknowledgement
from core.retrieval.spelling import (
    correct_parts,
    correct_word,
    english_correction,
    english_words,
    is_derived,
    unstretched,
)
from core.retrieval.terms import STOPWORDS, content_terms, quote_spans, tokens

_MARKUP = (
    (re.compile(r"<([^<>|\s]+)\|([^<>]+)>"), r"\2"),  # Slack <url|text>, <#C1|channel>
    (re.compile(r"<[@#!][^<>]*>"), " "),  # <@U123>, <!channel>, <#C123>, <@&role>
    (re.compile(r"<(?:https?|mailto):[^<>]*>"), " "),
    (re.compile(r"(?<![\w@])@(?:everyone|here|channel)\b", re.IGNORECASE), " "),
    # :emoji_codes:, not in code (`:toc:`, `:safe`: an AsciiDoc attribute, a Ruby symbol).
    (re.compile(r"(`[^`\n]*`)|:[a-z0-9_+-]+:"), lambda m: m[1] or " "),
    (re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F]"), " "),  # emoji
)
_CHAT_RE = re.compile(r"(?<![\w/])(" + "|".join(re.escape(k) for k in CHAT_FORMS) + r")(?![\w/])",
                      re.IGNORECASE)
#: An acronym the docs define is spelt out in the search ("sdg" -> "sdg synthetic data
#: generation") only while it occurs in at most this share of the chunks: the pages then
#: mostly say the long form. Chosen on robotics-textbook-2 and gazebo-docs ("urdf" in 14% of
#: the chunks, "gui" in 14%, "rl" in 6% lost facts when spelt out); 0.02 to 0.04 gave the same
#: figures on all eight sets, 0.01 lost robotics-textbook-chat's "qos" (1.8%).
ACRONYM_MAX_SHARE = 0.02
_UNIT_RE = re.compile(r"\b(\d+(?:\.\d+)?)([a-zA-Z]{1,4})\b")
_UNITS = frozenset("b kb mb gb tb k m g ms s sec min h hz khz mhz ghz mm cm km kg w kw v fps px".split())


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    """What ``understand`` made of a message.

    Args:
        text: what to search with (empty when nothing searchable is left).
        corrections: each misspelt word and the word it became (the docs' or an English one).
        small_talk: the message is only greetings, thanks or chit-chat.
    """

    text: str
    corrections: dict[str, str] = field(default_factory=dict)
    small_talk: bool = False


def strip_markup(text: str) -> str:
    """Remove mentions, channel links, emoji and Slack link syntax (keeping link text)."""
    for pattern, replacement in _MARKUP:
        text = pattern.sub(replacement, text)
    return text


def normalise_chat(text: str) -> str:
    """Expand chat spellings ("whats", "w/", "thru", "sloooow") and split numbers from units ("8gb")."""
    text = _CHAT_RE.sub(lambda m: CHAT_FORMS[m.group(1).lower()], text)
    text = _ELONGATED_WORD.sub(lambda m: unstretched(m.group(0)), text)
    return _UNIT_RE.sub(lambda m: f"{m.group(1)} {m.group(2)}" if m.group(2).lower() in _UNITS
                        else m.group(0), text)


#: A word with a letter typed three times or more: "sloooow", "pleeease", "sooo".
_ELONGATED_WORD = re.compile(r"(?<!#)\b[a-z]*([a-z])\1\1[a-z]*\b", re.IGNORECASE)  # not a colour (#fffeee)
_NAME_RE = re.compile(r"[a-z]{4,}")
#: An aside naming the writer's own instance of what the sentence names: one or two words in
#: parentheses ("a js lib (datepicker)"), or the word an "e.g." gives. A longer parenthesis says
#: what is asked ("trusted publishing (oidc, no token)").
_ASIDE = re.compile(r"\(\s*[\w.-]+(?:\s+[\w.-]+)?\s*\)|\be\.?g\.?,?\s+[\w.-]+", re.IGNORECASE)
#: What the writer calls their own: "my package `myapp`", "our service billing-api", a path they
#: type ("./mylib", "~/proj").
_OWN = re.compile(r"\b(?:my|our)\s+(?:own\s+)?(?:package|module|app|application|project|lib|library|service"
                  r"|repo|script|tool|plugin|cli|crate|component)\s+[`'\"]?[\w.-]+[`'\"]?"
                  r"|(?<![\w/])(?:\.{1,2}|~)/[^\s`'\"]*", re.IGNORECASE)


#: A word one edit from an English word is read as its typo only when that word is common (at least
#: this count in pyspellchecker's list: its 5,000 commonest words or so). People mistype the words they
#: use ("sensers"); "conda" is no typo of "condo", nor "buildozer" of "bulldozer". Set a priori, not
#: tuned; measured in BENCHMARKS.md (thirtieth pass).
TYPO_OF_FREQUENCY = 10_000
#: An acronym as typed: three to six capitals, maybe a plural's "s" ("CVEs").
_ACRONYM_RE = re.compile(r"(?<![\w.-])([A-Z]{3,6})s?(?![\w.-])")
#: Chat shorthand typed in capitals as often as not ("PTAL", "TODO"): no name of a tool.
_CHAT_CAPITALS = frozenset("todo wip eod eow ptal lgtm tldr noob halp aint readme asap".split())


def _acronyms(text: str) -> list[str]:
    """The acronyms ``text`` types in capitals, lower-cased; none when it shouts ("HELP ME PLS").

    Chat filler and shorthand ("TBH", "PTAL") are none either.
    """
    words = re.findall(r"[A-Za-z]{2,}", text)
    if 2 * sum(w.isupper() for w in words) > len(words):
        return []
    found = (m.group(1).lower() for m in _ACRONYM_RE.finditer(text))
    return [w for w in found if w not in FILLER and w not in CHAT_ABBREVIATIONS and w not in _CHAT_CAPITALS
            and w not in SHORTHAND]


def unknown_names(text: str, lexicon: Lexicon, *, limit: int = 3) -> list[str]:
    """Words of ``text`` that neither the docs nor English know, typos of English words aside.

    What a near miss asks about is usually such a name: "can i use mujoco instead of
    gazebo", "serve grpc endpoints", "freeze it with pyinstaller" share every other word
    with the docs. A typo the spelling step left ("sensers", "befor") is one edit from an
    English word and is no name; an acronym typed in capitals ("CVEs") is one whatever word
    it is an edit from ("caves"). An empty lexicon knows nothing, so it names nothing.

    Args:
        text: the search text (possessives and file names are read by their parts:
            "mujoco's", "pyinstaller.exe").
        lexicon: the collection's vocabulary.
        limit: stop after this many (one decides; a few are logged).
    """
    if lexicon.empty:
        return []
    # A name given as an aside ("init a js lib (datepicker)", "e.g. flatpickr") or called their own
    # ("./mylib", "my package `myapp`") is the writer's stack, what the question is asked from, not
    # what it asks about.
    text = _OWN.sub(" ", _ASIDE.sub(" ", text))
    english = english_words()
    names: list[str] = []

    def lacked(word: str) -> bool:
        # Neither English, nor derived from it, nor the docs' word or one they cut short ("concat").
        return (word not in english and not lexicon.knows(word) and not is_derived(word, english)
                and lexicon.abbreviated(word) is None)

    # An acronym typed in capitals ("CVEs", "SBOM") is a name whatever English word it is one
    # edit from ("caves"), when the docs never write it.
    for word in _acronyms(text):
        if lacked(word) and word not in names:
            names.append(word)
    if len(names) >= limit:
        return names[:limit]
    for word in dict.fromkeys(w for token in tokens(text) for w in re.split(r"['\u2019.]", token)):
        # "CVEs" was read as the acronym "cve"; chat shorthand ("repo") is searched spelt out, or
        # the docs use it.
        if word in names or word.removesuffix("s") in names or word in SHORTHAND:
            continue
        if (_NAME_RE.fullmatch(word) and lacked(word)
                and english_correction(word, min_frequency=TYPO_OF_FREQUENCY) is None):
            names.append(word)
            if len(names) >= limit:
                break
    return names


def _names_docs(word: str, *, lexicon: Lexicon) -> bool:
    """Whether ``word``, or the docs' word it is a typo of ("instal"), occurs in the collection."""
    if lexicon.knows(word):
        return True
    fixed = correct_word(word, lexicon)
    return fixed is not None and lexicon.knows(fixed)


def understand(message: str, lexicon: Lexicon) -> QueryAnalysis:
    """Clean a chat message for search, correct its spelling and spot small talk.

    Args:
        message: the question as the user wrote it.
        lexicon: the collection's vocabulary (may be empty: then no correction happens).

    Returns:
        The analysis; ``text`` keeps the message's word order.
    """
    # What the writer quotes is searched word for word: no filler dropped, nothing corrected.
    protected, quoted = _protect_quotes(strip_markup(message))
    normalised = normalise_chat(protected)
    cleaned = _restore(normalised, quoted)
    knows = None if lexicon.empty else partial(_names_docs, lexicon=lexicon)
    if is_small_talk(cleaned, knows=knows):
        return QueryAnalysis(text="", small_talk=True)
    text, corrections = _clean_words(docs_versions(without_acknowledgement(normalised), lexicon), lexicon)
    text = docs_compounds(text, lexicon, typed=normalised)
    return QueryAnalysis(text=_restore(text, quoted), corrections=corrections)


def docs_versions(text: str, lexicon: Lexicon) -> str:
    """Add the docs' own spelling of a versioned name: "ros2" -> "ros2 ros 2" where they write "ROS 2".

    A name and its version are written together or apart ("ros2", "ROS 2"; "python3",
    "Python 3"), and a search for one form misses the other. When the docs use the other form
    in more chunks than the one typed, it is searched too; the typed form stays, for the
    commands and package names that use it ("gazebo11").
    """
    if not lexicon.versions:
        return text  # none counted (yet): nothing to go by

    lowered = text.lower()
    added: set[str] = set()

    def add(typed: str, other: str) -> str:
        # Once, and not when the message writes it already ("ros2 or ROS 2?").
        if other.lower() in added or re.search(rf"\b{re.escape(other.lower())}\b", lowered):
            return typed
        added.add(other.lower())
        return f"{typed} {other}"

    def with_spaced(m: re.Match[str]) -> str:
        spaced = f"{m.group(1)} {m.group(2)}"
        if lexicon.versions.get(spaced.lower(), 0) > lexicon.words.get(m.group(0).lower(), 0):
            return add(m.group(0), spaced)
        return m.group(0)

    def with_joined(m: re.Match[str]) -> str:
        joined, spaced = m.group(1) + m.group(2), f"{m.group(1)} {m.group(2)}"  # a no-break space too
        if lexicon.words.get(joined.lower(), 0) > lexicon.versions.get(spaced.lower(), 0):
            return add(m.group(0), joined)
        return m.group(0)

    return SPACED_VERSION_RE.sub(with_joined, JOINED_VERSION_RE.sub(with_spaced, text))


#: Words written apart that the docs may write as one name: two or three, each a content word.
_WORD_RUN = re.compile(r"(?<![A-Za-z])[A-Za-z]{2,}+(?:[ \t]++[A-Za-z]{2,}+)++")
#: The fewest letters of a joined name ("apikey"); shorter joins are words by chance.
_COMPOUND_CHARS = 6


def docs_compounds(text: str, lexicon: Lexicon, *, typed: str = "") -> str:
    """Add the name the docs write as one word for words typed apart: "key type" -> "key type keytype".

    Option and class names join words (``keyType``, ``basicAuth``, ``TestClient``, ``lockfile``),
    and the search reads such a name as one word, which "key type" never matches. Two or
    three neighbouring words whose join the collection holds are searched joined too, right
    after them (at the end when only the typed words join: shorthand spelt out since); stop
    words never join ("my app" is no ``myapp``, "user in" no ``UserIn``).

    Args:
        text: the cleaned message.
        lexicon: the collection's vocabulary.
        typed: the message as typed, before shorthand was spelt out ("basic auth" is
            ``basicAuth`` even where "auth" became "authentication").
    """
    if lexicon.empty:
        return text
    lowered = f"{text} {typed}".lower()
    added: set[str] = set()

    def joins(words: list[str]) -> dict[int, str]:
        """Each join, by the position of the last word it joins."""
        found: dict[int, str] = {}
        for size in (3, 2):
            for i in range(len(words) - size + 1):
                parts = [w.lower() for w in words[i:i + size]]
                joined = "".join(parts)
                if (len(joined) >= _COMPOUND_CHARS and not any(p in STOPWORDS for p in parts)
                        and joined in lexicon.words and joined not in added and i + size - 1 not in found
                        and not re.search(rf"\b{joined}\b", lowered)):
                    added.add(joined)
                    found[i + size - 1] = joined
        return found

    def joined_after(run: re.Match[str]) -> str:
        words = run[0].split()
        found = joins(words)
        return " ".join(f"{w} {found[k]}" if k in found else w for k, w in enumerate(words))

    text = _WORD_RUN.sub(joined_after, text)
    extra = [j for run in _WORD_RUN.finditer(typed) for j in joins(run[0].split()).values()]
    return f"{text} {' '.join(extra)}" if extra else text


def _clean_words(text: str, lexicon: Lexicon) -> tuple[str, dict[str, str]]:
    """``text`` without filler, with shorthand spelt out and typos corrected; and the corrections."""
    kept: list[str] = []
    corrections: dict[str, str] = {}
    spelt: set[str] = set()
    before = ""
    written = set(re.findall(r"\w+", text.lower()))  # the words the message writes itself
    for raw in re.findall(r"\S+", text):
        word = raw.strip(".,!?;:()[]{}\"'`").lower()
        if word in FILLER or (word in CHAT_ABBREVIATIONS and not lexicon.knows(word)):
            continue
        # A clause's last word pairs with nothing after it ("list envs, deps and cmds").
        typed, before = before, ("" if raw[-1:] in ".,!?;:" else word)
        if word in SHORTHAND and not lexicon.empty and not lexicon.knows(word):
            raw = raw.lower().replace(word, SHORTHAND[word])  # "prod" -> "production"
            word = SHORTHAND[word]
        elif SHORTHAND.get(word) not in spelt and _spelt_more(word, text, lexicon):
            spelt.add(SHORTHAND[word])  # once: "env" -> "env environment", the docs' word mostly
            core = raw.rstrip(".,!?;:")
            raw = f"{core} {SHORTHAND[word]}{raw[len(core):]}"
        elif (pair := _spelt_pair(typed, word, lexicon)) and not set(pair.split()) <= spelt | written:
            # each long word once, and not where the message writes it
            spelt.update(pair.split())
            core = raw.rstrip(".,!?;:")
            raw = f"{core} {pair}{raw[len(core):]}"
        fixed = None if word in STOPWORDS else correct_word(word, lexicon) or correct_parts(word, lexicon)
        if fixed is not None:
            corrections[word] = fixed
            raw = raw.lower().replace(word, fixed)
            word = fixed
        if (long_form := _spelt_out(word, text, lexicon)) is not None and long_form not in spelt:
            spelt.add(long_form)
            # Inside the sentence ("sdg synthetic data generation?"): what splits the message into
            # sentences later must not leave the long form behind.
            core = raw.rstrip(".,!?;:")
            raw = f"{core} {long_form}{raw[len(core):]}"
        kept.append(raw)
    return " ".join(kept).strip(), corrections


def _spelt_pair(first: str, second: str, lexicon: Lexicon) -> str | None:
    """Two shorthand words in a row spelt out together, when the docs write both long words.

    Each alone may be the docs' own word ("env" a command, "vars" an option's name), so neither
    is spelt out; together ("env vars", "db conn") they name what the docs spell out.
    """
    if first not in SHORTHAND or second not in SHORTHAND or lexicon.empty:
        return None
    long_forms = (SHORTHAND[first], SHORTHAND[second])
    return " ".join(long_forms) if all(lexicon.knows(w) for w in long_forms) else None


def _spelt_more(word: str, text: str, lexicon: Lexicon) -> bool:
    """Whether shorthand the docs seldom use is searched with its long form too, which they use more.

    "env vars" finds the docs' "environment variables" where they write "env" only in a flag or
    two. Shorthand in more than ``ACRONYM_MAX_SHARE`` of the chunks is the docs' own word, as an
    acronym is ("Isaac Sim", a `db` session): it is searched alone, as "cmd" is where the docs
    say "cmd" more than "command".
    """
    long_form = SHORTHAND.get(word)
    if not long_form or lexicon.empty or long_form in text.lower():
        return False
    # Its other forms count too: "sims" is the docs' own where they write "Isaac Sim" everywhere.
    short = max(lexicon.words.get(word, 0), *(lexicon.stems.get(s, 0) for s in content_terms(word)))
    return short <= ACRONYM_MAX_SHARE * lexicon.chunks and lexicon.words.get(long_form, 0) > short


def _spelt_out(word: str, text: str, lexicon: Lexicon) -> str | None:
    """The long form of an acronym the docs define and seldom use, unless the message spells it out.

    An acronym in more than ``ACRONYM_MAX_SHARE`` of the chunks is the docs' own word ("gui",
    "urdf", "cli"): it finds their pages by itself, and its long form would only add words.
    """
    if word not in lexicon.acronyms and word.endswith("s"):
        word = word[:-1]  # "llms", "sdgs"
    long_form = lexicon.acronyms.get(word)
    if long_form is None or long_form in text.lower():
        return None
    if lexicon.words.get(word, 0) + lexicon.words.get(f"{word}s", 0) > ACRONYM_MAX_SHARE * lexicon.chunks:
        return None
    return long_form


def _placeholder(i: int) -> str:
    # A private-use character: never typed, never a word character, never stripped as markup.
    return f"\ue000{i}\ue000"


def _restore(text: str, quoted: Sequence[str]) -> str:
    """``text`` with the quoted spans put back in place of their placeholders."""
    for i, span in enumerate(quoted):
        text = text.replace(_placeholder(i), span)
    return text


def _protect_quotes(text: str) -> tuple[str, list[str]]:
    """``text`` with each quoted span replaced by a placeholder, and the spans in order."""
    text = text.replace("\ue000", " ")
    spans = quote_spans(text)
    quoted = [text[start:end] for start, end in spans]
    for i, (start, end) in reversed(list(enumerate(spans))):
        text = f"{text[:start]}{_placeholder(i)}{text[end:]}"
    return text, quoted
