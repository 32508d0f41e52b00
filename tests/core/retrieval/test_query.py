"""Query understanding: chat noise, units, spelling against the collection, small talk."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.retrieval.lexicon import Lexicon, LexiconCache, LexiconFile, chunk_versions
from core.retrieval.query import (
    docs_compounds,
    normalise_chat,
    strip_markup,
    understand,
    unknown_names,
)
from core.retrieval.spelling import correct_word, english_correction

LEXICON = Lexicon(chunks=10, words={
    "gazebo": 6, "topics": 4, "topic": 3, "planner": 2, "prefix": 2, "install": 5, "binaries": 2,
    "simulation": 4, "ubuntu": 3, "robot": 8,
})


def test_markup_and_mentions_are_stripped_keeping_link_text() -> None:
    text = strip_markup("<@U123> <!channel> see <https://x.example/a|the install page> :tada: 🙏 now")
    assert "U123" not in text and "channel" not in text and "tada" not in text
    assert "the install page" in text and "now" in text


def test_an_emoji_code_in_code_is_what_the_question_asks_about() -> None:
    assert strip_markup("how do i set `:favicon:` :thinking_face:") == "how do i set `:favicon:`  "


def test_chat_spellings_and_units_are_normalised() -> None:
    assert normalise_chat("whats the min ram w/ 8gb") == "what is the min ram with 8 gb"
    assert normalise_chat("v2.5 and 3cats") == "v2.5 and 3cats"  # not a unit: unchanged
    # Abbreviations English has no entry for would read as names the docs never mention.
    assert normalise_chat("diff btwn urdf and sdf bcuz") == "diff between urdf and sdf because"
    # Thanks said in advance, however it is spelt, leaves no "advance" to search for.
    for thanks in ("thanks in advance", "thx in advance", "ty in advance", "thank you in advance",
                   "thank u in advance"):
        assert "advance" not in normalise_chat(f"fastest prod setup? {thanks}")


@pytest.mark.parametrize(("chat", "normal"), [
    ("the ci build is sloooow today", "the ci build is slow today"),
    ("pleeease, a looong timeout", "please, a long timeout"),
    ("coool, it works sooo goood", "cool, it works so good"),  # the commoner word: not "col", "god"
    ("www.example.com, aaa and zzz", "www.example.com, aaa and zzz"),  # one letter: nothing stretched
    ("loool xxl", "loool xxl"),  # no English word: kept
    ("Brrr, #fffeee is cold", "Brrr, #fffeee is cold"),  # no vowel; a colour
])
def test_stretched_words_read_as_the_word(chat: str, normal: str) -> None:
    assert normalise_chat(chat) == normal


@pytest.mark.parametrize(("typo", "fixed"), [
    ("topcis", "topics"), ("planer", None), ("prefx", "prefix"), ("binarys", None),
    ("simulaton", "simulation"),
])
def test_misspellings_are_corrected_against_the_collection(typo: str, fixed: str | None) -> None:
    # "planer" is an English word (a tool): it is kept rather than turned into a docs word;
    # "binarys" already meets "binaries" at their common stem, so search finds it as it is.
    assert correct_word(typo, LEXICON) == fixed


#: A collection's words for the correction cases below.
TYPO_LEXICON = Lexicon(chunks=10, words={
    "receive": 2, "container": 3, "security": 1, "installer": 3, "sort": 2, "recompiled": 1,
    "orms": 2, "wiki": 3, "sdf": 9, "lidar": 4, "urdf": 5, "forgoing": 1, "tier": 2, "wheel": 5,
    "reactive": 2, "table": 1, "better": 3, "planner": 6, "filled": 7, "proof": 8,
})


@pytest.mark.parametrize(("typo", "fixed"), [
    # A swap of neighbouring letters is one edit.
    ("recieve", "receive"), ("contianer", "container"), ("secuirty", "security"),
    # The first letter stays: dropping a prefix names another tool.
    ("pyinstaller", None), ("isort", None), ("precompile", None),
    # A four-letter word only for a missing or swapped letter ("OOMs", another format).
    ("ooms", None), ("wifi", None), ("srdf", None), ("lidr", "lidar"), ("udrf", "urdf"),
    # An English word nearer than the docs word, or a stop word the typo only swaps, wins.
    ("forgeting", "forgetting"), ("thier", "their"), ("wheell", "wheel"),
    # No docs word near (two edits only for long words): kept.
    ("realtime", None), ("tuple", None), ("betwen", None),
    # A rare English word one doubled letter short of a docs word is that word; a common
    # one ("filed") or a short one ("prof") is what the writer meant.
    ("planer", "planner"), ("filed", None), ("prof", None),
])
def test_corrections_follow_how_people_mistype(typo: str, fixed: str | None) -> None:
    assert correct_word(typo, TYPO_LEXICON) == fixed


def test_a_stop_word_never_replaces_the_docs_word_a_typo_stands_for() -> None:
    # pyspellchecker's most frequent neighbours of "opne" and "tiem" are "one" and "them".
    lexicon = Lexicon(chunks=4, words={"open": 3, "time": 4, "file": 5})
    assert understand("how do i opne a tiem file", lexicon).text == "how do i open a time file"


def test_quoted_words_are_searched_as_written() -> None:
    lexicon = Lexicon(chunks=4, words={"quick": 1, "start": 2, "open": 3})
    analysis = understand("lol what is 'quick start' about? and `opne` it, 'whats new' too", lexicon)
    assert analysis.text == "what is 'quick start' about? and `opne` it, 'whats new' too"
    assert analysis.corrections == {}


def test_chat_contractions_without_apostrophes_are_expanded() -> None:
    expanded = normalise_chat("theres no roscore and i couldnt find it")
    assert expanded == "there is no roscore and i could not find it"


def test_chat_phrases_of_tone_are_left_out_of_the_search() -> None:
    lexicon = Lexicon(chunks=4, words={"worker": 3, "right": 1})
    assert understand("which tasks is each worker running right now?", lexicon).text.split() == [
        "which", "tasks", "is", "each", "worker", "running", "?"]
    assert understand("for some reason the worker dies, any ideas?", lexicon).text == "the worker dies, ?"
    assert understand("right click the worker", lexicon).text == "right click the worker"


def test_shorthand_is_spelt_out_unless_the_docs_use_it() -> None:
    lexicon = Lexicon(chunks=4, words={"config": 3, "production": 2, "cmd": 5, "command": 1})
    words = understand("which cfg do ppl use in prod rn? same cmd?", lexicon).text.split()
    assert {"config", "production", "people"} <= set(words)
    assert "cmd?" in words and "command" not in words  # the docs say "cmd" themselves
    assert "rn" not in words  # "right now": tone, not topic


def test_an_ordinal_in_digits_is_searched_as_the_docs_write_it() -> None:
    lexicon = Lexicon(chunks=4, words={"third": 3, "party": 3, "plugins": 2})
    assert "third" in understand("any 3rd party plugins?", lexicon).text.split()
    written = Lexicon(chunks=4, words={"3rd": 3, "party": 3, "plugins": 2})  # the docs' own form
    assert "3rd" in understand("any 3rd party plugins?", written).text.split()


def test_shorthand_the_docs_use_less_than_its_long_form_is_searched_with_it() -> None:
    lexicon = Lexicon(chunks=100, words={"env": 2, "environment": 30, "vars": 1, "variables": 20, "cmd": 5,
                                         "command": 1, "certificate": 9, "sim": 12, "simulation": 40})
    assert understand("set it via env vars?", lexicon).text == "set it via env environment vars variables?"
    assert understand("which cmd and cert", lexicon).text == "which cmd and certificate"
    # Shorthand in many chunks is the docs' own word ("Isaac Sim"): searched alone.
    assert understand("isaac sim gpu", lexicon).text == "isaac sim gpu"
    assert understand("humanoid sims", lexicon).text == "humanoid sims"  # its other forms count too
    # Written out already, or typed twice: once.
    assert understand("env or environment", lexicon).text == "env or environment"
    assert understand("env vs env", lexicon).text == "env environment vs env"


def test_two_shorthand_words_in_a_row_are_searched_spelt_out_together() -> None:
    # The docs use "env" (a command) and "vars" (an option) themselves, so neither is spelt out alone.
    lexicon = Lexicon(chunks=10, words={"env": 6, "environment": 4, "vars": 5, "variables": 2, "db": 1})
    assert understand("how to set env vars", lexicon).text == "how to set env vars environment variables"
    # Only when the docs write both long words.
    assert understand("env db?", lexicon).text == "env db?"
    # Not across a clause, nor where the message writes the long words itself; each long word once.
    assert understand("set env. vars are read", lexicon).text == "set env. vars are read"
    assert understand("env vars (environment variables)", lexicon).text == "env vars (environment variables)"
    assert understand("env vars env vars", lexicon).text == "env vars environment variables env vars"


def test_an_english_correction_is_the_same_in_every_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # pyspellchecker breaks ties between words as frequent in set order, which follows the hash seed.
    class Checker:
        def __init__(self, *words: str) -> None:
            self.word_frequency = dict.fromkeys(words, 50)

        def candidates(self, word: str) -> set[str]:
            return set(self.word_frequency)

    def corrected(*words: str) -> str | None:
        monkeypatch.setattr("core.retrieval.spelling._english", lambda: Checker(*words))
        english_correction.cache_clear()
        try:
            return english_correction("tekton")
        finally:
            english_correction.cache_clear()

    assert corrected("teton", "teston", "nekton") is None  # "nekton" first: another first letter
    assert corrected("teton", "teston") == "teston"


def test_known_and_english_words_are_never_corrected() -> None:
    assert correct_word("gazebo", LEXICON) is None
    assert correct_word("lecture", LEXICON) is None
    assert correct_word("topcis", Lexicon()) is None  # no lexicon yet: nothing to correct against


def test_names_neither_the_docs_nor_english_know_are_found() -> None:
    # "mujoco" and "grpc" are names; "sensers" is a typo of an English word, "lecture" English,
    # "gazebo" the docs' own, "gpu" too short to tell; each name is listed once.
    text = "can i run mujoco and grpc with gazebo? the sensers in lecture use gpu, mujoco too"
    assert unknown_names(text, LEXICON) == ["mujoco", "grpc"]
    # Possessives and file names by their parts; at most ``limit`` names.
    assert unknown_names("MuJoCo\u2019s docs or pyinstaller.exe, cibuildwheel", LEXICON) == [
        "mujoco", "pyinstaller", "cibuildwheel"]
    assert unknown_names("mujoco grpc pyinstaller cibuildwheel", LEXICON, limit=2) == ["mujoco", "grpc"]
    assert unknown_names(text, Lexicon()) == []  # no lexicon yet: nothing is known, nothing named


def test_a_word_one_edit_from_a_rare_english_word_only_is_a_name() -> None:
    # "conda" is one edit from "condo", "buildozer" from "bulldozer": words too rare to be mistyped
    # for; "sensers" is a typo of "sensors", a common word.
    assert english_correction("conda") == "condo"
    assert unknown_names("can i install it with conda or buildozer", LEXICON) == ["conda", "buildozer"]
    assert unknown_names("the sensers report nothing", LEXICON) == []


def test_a_name_given_as_an_aside_is_the_writers_stack_not_what_is_asked() -> None:
    assert unknown_names("where do i start a turtlebot in gazebo?", LEXICON) == ["turtlebot"]
    assert unknown_names("where do i start a robot (turtlebot) in gazebo?", LEXICON) == []
    assert unknown_names("a planner, e.g. navfn, on gazebo's robots", LEXICON) == []
    assert unknown_names("can i swap gazebo for mujoco (grpc)?", LEXICON) == ["mujoco"]
    # A longer parenthesis says what is asked.
    assert unknown_names("robot planner (mujoco, no gazebo)?", LEXICON) == ["mujoco"]


def test_an_acronym_in_capitals_the_docs_never_write_is_a_name() -> None:
    # "CVEs" is one edit from "caves": typed in capitals it is an acronym, not a typo.
    assert unknown_names("does gazebo scan my robots for known CVEs?", LEXICON) == ["cve"]
    # In lower case too, now that "caves" is too rare an English word to be mistyped for.
    assert unknown_names("does gazebo scan my robots for known cves?", LEXICON) == ["cves"]
    # English shouted, the docs' own acronym and one too short to tell are none.
    lexicon = Lexicon(chunks=10, words={"gazebo": 6, "ros": 3, "topics": 4})
    assert unknown_names("HELP, gazebo USES the ROS topics on my PC", lexicon) == []
    assert unknown_names("HELP, gazebo USES the ROS topics on my GPU", lexicon) == ["gpu"]
    # Chat shorthand in capitals, shouting, and the docs' words shortened are none.
    for message in ("TODO how do i limit gazebo topics?", "NOOB q, PTAL: where do gazebo topics go, EOD pls",
                    "WHERE ARE THE GAZEBO TOPICS KEPT", "gazebo REPO CONF", "TBH the gazebo topics, ASAP"):
        assert unknown_names(message, lexicon) == [], message


def test_the_writers_own_paths_and_named_packages_are_their_stack() -> None:
    assert unknown_names("gazebo add -e ./mylib fails, and ~/turtlebot/x too", LEXICON) == []
    assert unknown_names("my own package `turtlebot` in gazebo", LEXICON) == []
    assert unknown_names("can gazebo load turtlebot", LEXICON) == ["turtlebot"]


def test_a_word_the_docs_hyphenate_is_known_written_solid() -> None:
    lexicon = Lexicon(chunks=10, words={"call-outs": 2, "pop-up": 1, "gazebo": 3})
    assert lexicon.knows("callout") and lexicon.knows("popups") and not lexicon.knows("mujoco")
    assert unknown_names("are callouts or popups in gazebo like mujoco?", lexicon) == ["mujoco"]


def test_english_words_with_an_english_affix_are_no_names() -> None:
    # Made with the prefixes and suffixes English makes words with; "post-" is not one of them.
    text = "make it stackable, precompile the files, relocking is slow; a postinstall hook or flexbox?"
    assert unknown_names(text, LEXICON) == ["postinstall", "flexbox"]


def test_filler_is_left_out_and_typos_fixed() -> None:
    analysis = understand("hey lol quick q, how do i install gazebo on ubuntu? the simulaton pls", LEXICON)
    assert not analysis.small_talk
    assert "lol" not in analysis.text and "hey" not in analysis.text.split()
    assert "simulation" in analysis.text and analysis.corrections == {"simulaton": "simulation"}


def test_chat_abbreviations_are_filler_not_names() -> None:
    # "fwiw" is neither a docs word nor English: kept, it read as a name the docs do not use.
    analysis = understand("does gazebo install on ubuntu? fwiw we're on 24.04, ymmv, lmk", LEXICON)
    assert not {"fwiw", "ymmv", "lmk"} & set(analysis.text.split())
    assert unknown_names(analysis.text, LEXICON) == []
    # One the docs use is their word: Node Version Manager's docs say "nvm".
    node = Lexicon(chunks=10, words={"nvm": 4, "install": 5, "node": 3})
    assert "nvm" in understand("how do i install node with nvm?", node).text
    assert not understand("what is nvm?", node).small_talk


def test_a_typo_inside_a_compound_is_fixed_part_by_part() -> None:
    analysis = understand("how do i run the gazebo-simulaton with a ubuntu/binaires setup?", LEXICON)
    assert "gazebo-simulation" in analysis.text and "ubuntu/binaries" in analysis.text
    assert analysis.corrections == {"gazebo-simulaton": "gazebo-simulation",
                                    "ubuntu/binaires": "ubuntu/binaries"}
    assert "and/or" in understand("install and/or simulation", LEXICON).text  # nothing misspelt: kept
    assert understand("see http://localhost/docs/simulaton", LEXICON).corrections == {}  # an address


@pytest.mark.parametrize("message", [
    "thanks!! that fixed it 🙏", "hey bot hows it going", "ty!", "yo",
    # Asking whether someone is there ("around" alone is no small talk: "how do i get around it?").
    "yo 👋 anyone around?", "is anybody here", "u there?", "hey, anyone online?",
    # ... after a greeting that names whom it greets.
    "hi there! anyone around?", "hey everyone 👋 anyone around?", "hi guys! anybody here?",
    "hey team, anyone on?",
    "how are you?", "hey, how are you doing?", "who are you?", "what's up", "got it", "yes", "why?",
    "and then?", "me too",
    # Praise asks nothing, whatever it praises.
    "lol this framework is so cool", "hey thanks a lot uv is awesome", "gazebo's amazing!",
    "the docs are really great", "ok cool thats all for today, cya 👋",
    "hi! just wanna say thanks for this bot, its been a lifesaver",
    # Well-wishing.
    "hey everyone 👋 happy friday", "happy holidays all!", "congrats everyone!", "have a great weekend folks",
])
def test_small_talk_is_recognised(message: str) -> None:
    assert understand(message, LEXICON).small_talk


@pytest.mark.parametrize("message", ["thanks a lot, you saved my week", "cheers, legend",
                                     # "wanna" reads as "want to": stop words do not make it longer.
                                     "hi! just wanna say thanks for this bot, my team owes you one"])
def test_thanks_naming_nothing_the_docs_know_is_small_talk(message: str) -> None:
    assert understand(message, LEXICON).small_talk
    # Without a lexicon nothing is known to be outside the docs: it is searched.
    assert not understand(message, Lexicon()).small_talk


@pytest.mark.parametrize("message", [
    "thanks, and how do i install gazebo?", "nice. can i pause it too?",
    "thanks! i need the ubuntu install steps", "thanks what is a planner",
    "thx, the ubuntu instal keeps failing", "thanks! can you do the same for ubuntu",
    "how do i get around it?", "anyone around who knows how to install gazebo?",
    "hi everyone, anyone around who knows how to install gazebo?", "hey all, is there a planner?",
    # Only common words, but a question about what the docs write in them (Rust's `if let`).
    "what is if let used for", "what's if let for, and when should i use it", "what is if let?",
    "what is self?",
    "great, now the ubuntu install fails", "is gazebo cool?", "gazebo is cool but how do i install it",
    "love how the planner works but it crashes on ubuntu", "love that it crashes", "loving this error",
    "thanks, i want to say the ubuntu install still fails", "want to install gazebo today",
    "where does it say that?", "which one do i want?", "is it out today?",
    "thanks, that fixed it but now i want to run it on two machines at once with different settings please",
    # A day or "all" alone is no wish: in a thread they ask about the thread's subject.
    "are these all the same?", "can i do it all at once?", "and on sunday?", "what about all of them?",
    "happy friday! how do i install gazebo?",
])
def test_questions_with_small_talk_are_not_small_talk(message: str) -> None:
    assert not understand(message, LEXICON).small_talk


@pytest.mark.parametrize(("message", "searched"), [
    ("ok cool. and on my mac?", "and on my mac?"), ("great, how do i pause it?", "how do i pause it?"),
    ("Thanks! Got it — and the ubuntu install?", "and the ubuntu install?"),
    # A topic word, or an acknowledgement that is all there is, stays.
    ("nice output for the planner?", "nice output for the planner?"),
    ("ok… and the ubuntu install?", "and the ubuntu install?"),
    # A name beginning with one, or a word before a colon (the `nice` command), is asked about.
    ("oh-my-zsh plugin for gazebo?", "oh-my-zsh plugin for gazebo?"),
    ("neat.js planner?", "neat.js planner?"),
    ("nice: how do i lower the planner's priority?", "nice: how do i lower the planner's priority?"),
])
def test_an_acknowledgement_opening_a_question_is_not_searched(message: str, searched: str) -> None:
    # "cool" would count as a word of the follow-up's own that the passages found must hold.
    assert understand(message, LEXICON).text == searched


def test_mentions_only_leave_nothing_to_search() -> None:
    assert understand("<!channel> <!here> @everyone", LEXICON).text == ""


def saved_lexicon(tmp_path: Path, documents: dict[str, list[str]]) -> Path:
    """A lexicon file recording ``documents`` (name -> chunk texts), each at hash "h1"."""
    path = tmp_path / "lexicon-docs.json"
    file = LexiconFile(path=path)
    for name, texts in documents.items():
        file.put(name, "h1", texts)
    file.save()
    return path


def test_lexicon_file_tracks_documents_and_reloads_on_change(tmp_path: Path) -> None:
    path = saved_lexicon(tmp_path, {"a.md": ["Install Gazebo on Ubuntu", "Gazebo topics"],
                                    "b.md": ["Robot planner"]})
    cache = LexiconCache(path=path)
    lexicon = cache.get()
    assert lexicon.chunks == 3 and lexicon.words["gazebo"] == 2 and lexicon.knows("topic")
    assert lexicon.idf("gazebo") < lexicon.idf("planner") < lexicon.idf("unknownword")
    again = LexiconFile(path=path)
    assert again.has("a.md", "h1") and not again.has("a.md", "h-other")
    again.drop(["b.md"])
    again.save()
    assert "planner" not in cache.get().words


def test_unreadable_lexicon_is_rebuilt_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "lexicon-docs.json"
    path.write_text("{not json", encoding="utf-8")
    assert LexiconCache(path=path).get().empty
    assert not LexiconFile(path=path).has("a.md", "h")


def test_a_damaged_lexicon_entry_is_dropped_not_fatal(tmp_path: Path) -> None:
    import json

    path = saved_lexicon(tmp_path, {"good.md": ["ROS 2 nodes"]})
    written = json.loads(path.read_text())
    damaged = {"hash": "h1", "chunks": 1, "words": None, "acronyms": {}, "versions": {}}
    written["documents"].update({"a.md": damaged, "b.md": "not an entry",
                                 "c.md": {"hash": "h1", "chunks": "2", "words": {}}})
    path.write_text(json.dumps(written))
    file = LexiconFile(path=path)
    assert file.lexicon().words == {"ros": 1, "nodes": 1}  # the good entry only
    assert not file.has("a.md", "h1")  # recorded again at the next ingest


def test_term_idf_pools_word_forms_and_ranks_rare_terms_higher(tmp_path: Path) -> None:
    lexicon = Lexicon(chunks=10, words={"install": 4, "installing": 2, "ubuntu": 1, "gazebo": 9})
    terms = {"install": 1, "installing": 1, "ubuntu": 2, "gazebo": 3}
    idf = lexicon.term_idf(lambda word: frozenset({terms[word]}) if word in terms else frozenset())
    assert idf(2) > idf(1) > idf(3)  # ubuntu (1 chunk) > install (4 + 2 pooled) > gazebo (9)
    assert idf(99) > idf(2)  # never seen: the highest weight


def test_each_collection_has_its_own_lexicon(tmp_path: Path) -> None:
    from core.retrieval.lexicon import LexiconCaches

    caches = LexiconCaches(folder=tmp_path)
    docs, api = LexiconFile(path=caches.path("docs")), LexiconFile(path=caches.path("api"))
    docs.put("a.md", "h", ["gazebo topics"])
    api.put("b.md", "h", ["endpoints routers"])
    docs.save()
    api.save()
    assert caches.get("docs").knows("gazebo") and not caches.get("docs").knows("routers")
    assert caches.get("api").knows("routers") and caches.get("other").empty


def test_a_lexicon_that_cannot_be_saved_does_not_fail_the_ingest(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    file = LexiconFile(path=blocker / "lexicon-docs.json")
    file.put("a.md", "h", ["gazebo"])
    file.save()  # the parent is a file: the save is skipped with a warning, nothing raised
    assert "could not save the vocabulary" in caplog.text


def test_acronyms_are_read_where_the_docs_define_them() -> None:
    from core.retrieval.acronyms import commonest, definitions

    found = definitions(
        "Isaac Sim offers Synthetic Data Generation (SDG). Quality of Service (QoS) settings; "
        "the Denavit-Hartenberg (DH) convention; Large Language Models (LLMs) plan tasks. "
        "Run it (see below), or use a GUI (optional). A two-word name (TWN) counts. "
        "Information Technology (IT) is a stop word. Learning from Human Feedback (LHF).")
    assert set(found) == {("sdg", "synthetic data generation"), ("qos", "quality of service"),
                          ("dh", "denavit-hartenberg"), ("llm", "large language models"),
                          ("twn", "two-word name"), ("lhf", "learning from human feedback")}
    # A quiz's wrong option is written once; the definition the docs use wins.
    assert commonest({"sdg": {"standard definition graphics": 1, "synthetic data generation": 4}}) == {
        "sdg": "synthetic data generation"}


def test_the_lexicon_keeps_each_documents_acronyms(tmp_path: Path) -> None:
    path = saved_lexicon(tmp_path, {
        "isaac.md": ["Synthetic Data Generation (SDG) makes labelled images.", "SDG needs a GPU."],
        "quiz.md": ["b) Standard Definition Graphics (SDG)"]})
    lexicon = LexiconCache(path=path).get()
    assert lexicon.acronyms == {"sdg": "synthetic data generation"}
    again = LexiconFile(path=path)
    again.drop(["isaac.md"])
    assert again.lexicon().acronyms == {"sdg": "standard definition graphics"}


def test_an_acronym_the_docs_seldom_use_is_spelt_out_in_the_search() -> None:
    words = {"sdg": 1, "synthetic": 3, "gui": 30, "graphical": 1, "isaac": 20}
    lexicon = Lexicon(chunks=100, words=words,
                      acronyms={"sdg": "synthetic data generation", "gui": "graphical user interface"})
    assert "SDG synthetic data generation in isaac" in understand("whats SDG in isaac sim?", lexicon).text
    # Used in 30% of the chunks, "gui" is the docs' own word: it finds their pages as it is.
    assert "graphical" not in understand("can i run it without the gui", lexicon).text
    # Spelt out by the writer already: nothing is added twice.
    spelt = understand("is synthetic data generation (sdg) slow?", lexicon).text
    assert spelt.count("synthetic") == 1
    assert "synthetic" not in understand("whats sdg", Lexicon(chunks=100, words=words)).text  # none recorded
    # Spelt out once, inside its sentence: a question sentence searched alone keeps it.
    twice = understand("what is SDG? is SDG slow?", lexicon).text
    assert twice == "what is SDG synthetic data generation? is SDG slow?"
    assert "synthetic data generation" in understand("any good sdgs for robots", lexicon).text  # plural


def test_a_document_recorded_before_acronyms_were_read_is_recorded_again(tmp_path: Path) -> None:
    import json

    path = tmp_path / "lexicon-docs.json"
    path.write_text(json.dumps({"version": 1, "documents": {
        "isaac.md": {"hash": "h1", "chunks": 1, "words": {"sdg": 1}}}}), encoding="utf-8")
    file = LexiconFile(path=path)
    assert file.lexicon().words == {"sdg": 1}  # still read
    assert not file.has("isaac.md", "h1")  # so the next ingest records its acronyms


def test_a_document_recorded_before_versions_were_counted_is_recorded_again(tmp_path: Path) -> None:
    import json

    path = tmp_path / "lexicon-docs.json"
    path.write_text(json.dumps({"version": 1, "documents": {
        "nodes.md": {"hash": "h1", "chunks": 1, "words": {"ros": 1}, "acronyms": {}}}}), encoding="utf-8")
    file = LexiconFile(path=path)
    assert not file.has("nodes.md", "h1")  # so the next ingest counts its versions
    assert understand("ros2 nodes", file.lexicon()).text == "ros2 nodes"  # nothing to go by yet


def test_the_lexicon_counts_names_written_apart_from_their_version(tmp_path: Path) -> None:
    path = saved_lexicon(tmp_path, {
        "intro.md": ["ROS 2 replaces ROS 1.", "In ROS 2, nodes talk over DDS."],
        "cli.md": ["Run `ros2 run demo talker` with Python 3.12 or Python 3."]})
    lexicon = LexiconCache(path=path).get()
    assert lexicon.versions == {"ros 2": 2, "ros 1": 1, "python 3": 1}  # not "python 3.12"
    assert lexicon.words["ros2"] == 1
    # A no-break space (HTML) counts; a stop word before a number is no name ("in 10 steps").
    assert chunk_versions("ROS\u00a02 starts in 10 steps, for 2 robots.") == {"ros 2"}


def test_versions_counted_for_only_some_documents_are_not_used(tmp_path: Path) -> None:
    import json

    path = saved_lexicon(tmp_path, {"intro.md": ["ROS 2 replaces ROS 1."]})
    written = json.loads(path.read_text())
    written["documents"]["cli.md"] = {"hash": "h1", "chunks": 3, "words": {"ros2": 3}, "acronyms": {}}
    path.write_text(json.dumps(written))
    # cli.md's pairs are not counted yet: set against its words they would mislead.
    assert LexiconFile(path=path).lexicon().versions == {}


@pytest.mark.parametrize(("message", "searched"), [
    # The docs mostly write "ROS 2": it is searched too, and the typed form stays (commands use it).
    ("why ros2 over ros1?", "why ros2 ros 2 over ros1 ros 1?"),
    # They write "gazebo11" (a package) more than "Gazebo 11": the joined form is added.
    ("keep gazebo 11 installed", "keep gazebo 11 gazebo11 installed"),
    ("uninstall gazebo11", "uninstall gazebo11"),
    # Once only, and not when the message writes it already.
    ("ros2 or ROS 2?", "ros2 or ROS 2?"), ("ros2 and ros2", "ros2 ros 2 and ros2"),
    # A dotted version, a name the docs do not version and a bare number stay as typed.
    ("python3.12 not found", "python3.12 not found"), ("esp32 board", "esp32 board"), ("2 nodes", "2 nodes"),
])
def test_a_versioned_name_is_searched_as_the_docs_write_it(message: str, searched: str) -> None:
    lexicon = Lexicon(chunks=50, words={"ros": 40, "ros2": 3, "gazebo": 30, "gazebo11": 4, "python3": 2,
                                        "esp32": 5, "nodes": 9, "board": 1, "installed": 2, "uninstall": 1,
                                        "keep": 3, "found": 2, "over": 2, "why": 1},
                      versions={"ros 2": 30, "ros 1": 5, "gazebo 11": 1, "python 3": 6})
    assert understand(message, lexicon).text == searched


@pytest.mark.parametrize(("message", "searched"), [
    # Two or three words the docs write as one name: the name is searched too, right after them.
    ("how do i set the key type for acme", "how do i set the key type keytype for acme"),
    ("disable the check new version thing", "disable the check new version checknewversion thing"),
    ("where's the lock file?", "where's the lock file lockfile?"),
    # Shorthand spelt out still joins as typed ("auth" -> "authentication", but ``basicAuth``).
    ("basic auth on a router", "basic authentication on a router basicauth"),
    # Stop words never join; a name typed already, or joined once, is not added again.
    ("my app crashes", "my app crashes"), ("the user in the form", "the user in the form"),
    ("keytype or key type?", "keytype or key type?"),
    ("lock file, lock file", "lock file lockfile, lock file"),
])
def test_words_typed_apart_are_searched_with_the_name_the_docs_join(message: str, searched: str) -> None:
    lexicon = Lexicon(chunks=50, words={"keytype": 3, "key": 10, "type": 20, "basicauth": 2, "myapp": 5,
                                        "userin": 2, "checknewversion": 1, "lockfile": 4})
    assert understand(message, lexicon).text == searched
    assert docs_compounds("key type", Lexicon()) == "key type"  # no vocabulary yet: nothing to go by


def test_an_abbreviation_of_a_docs_word_names_nothing_they_lack() -> None:
    lexicon = Lexicon(chunks=10, words={"concatenate": 2, "strings": 3, "operator": 2})
    assert lexicon.abbreviated("concat") == "concatenate"
    assert lexicon.abbreviated("conca") == "concatenate"
    assert lexicon.abbreviated("conc") is None  # too short to read as one word's abbreviation
    assert unknown_names("how do i concat strings", lexicon) == []
    assert unknown_names("can i use mujoco for strings", lexicon) == ["mujoco"]
