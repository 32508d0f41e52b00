"""Chat English that query understanding rewrites: chat spellings, phrases of tone, shorthand.

General lists about how people write in chat, never about one corpus (``core.retrieval.query``).
"""

from __future__ import annotations

#: Chat spellings whose standard form is a stop word or a known word.
CHAT_FORMS: dict[str, str] = {
    "whats": "what is", "hows": "how is", "wheres": "where is", "whos": "who is",
    "thats": "that is", "dont": "do not", "doesnt": "does not", "cant": "cannot",
    "wont": "will not", "isnt": "is not", "didnt": "did not", "im": "i am", "ive": "i have",
    "u": "you", "ur": "your", "r": "are", "w/": "with", "w/o": "without", "b/c": "because",
    "bc": "because", "cuz": "because", "thru": "through", "tho": "though", "pls": "", "plz": "",
    "abt": "about", "wanna": "want to", "gonna": "going to", "gotta": "have to",
    "smth": "something", "sth": "something", "theres": "there is", "heres": "here is",
    "arent": "are not", "wasnt": "was not", "werent": "were not", "hasnt": "has not",
    "havent": "have not", "hadnt": "had not", "shouldnt": "should not", "couldnt": "could not",
    "wouldnt": "would not", "youre": "you are", "theyre": "they are", "youve": "you have",
    "weve": "we have", "theyve": "they have", "dunno": "do not know", "lemme": "let me",
    "gimme": "give me", "btwn": "between", "rly": "really", "bcuz": "because",
    # Tone, not topic: a rare word of them ("right") would outweigh what is asked.
    "right now": "", "at the moment": "", "for some reason": "", "any idea": "", "any ideas": "",
    "thanks in advance": "", "thx in advance": "", "ty in advance": "", "thank you in advance": "",
    "thank u in advance": "",
    "or something": "", "or whatever": "", "kind of": "", "sort of": "",
}

#: Developers' shorthand in chat and the word docs spell out; used instead of the short form when
#: the collection does not use it (ROS docs say "cmd_vel", uv's say "env"), beside it when the
#: collection writes the long form in more chunks.
SHORTHAND: dict[str, str] = {
    "ppl": "people", "cfg": "config", "conf": "config", "cmd": "command", "cmds": "commands",
    "pw": "password", "passwd": "password", "k8s": "kubernetes", "prod": "production",
    "env": "environment", "envs": "environments", "repo": "repository", "repos": "repositories",
    "dep": "dependency", "deps": "dependencies", "reqs": "requirements", "lib": "library",
    "libs": "libraries", "pkg": "package", "pkgs": "packages", "dir": "directory", "dirs": "directories",
    "creds": "credentials", "algo": "algorithm", "algos": "algorithms", "msg": "message",
    "msgs": "messages", "param": "parameter", "params": "parameters", "arg": "argument",
    "args": "arguments", "perf": "performance", "impl": "implementation", "db": "database",
    "dbs": "databases", "func": "function", "funcs": "functions", "fn": "function", "var": "variable",
    "vars": "variables", "obj": "object", "img": "image", "imgs": "images", "mem": "memory",
    "perms": "permissions", "approx": "approximately", "ver": "version", "nav": "navigation",
    "sim": "simulation", "sims": "simulations", "mins": "minutes", "secs": "seconds", "hrs": "hours",
    "infra": "infrastructure", "auth": "authentication", "js": "javascript",
    "py": "python", "dev": "development", "vid": "video", "pic": "picture", "pics": "pictures",
    "num": "number", "cert": "certificate", "certs": "certificates", "conn": "connection",
    "conns": "connections", "attr": "attribute", "attrs": "attributes", "resp": "response",
    "1st": "first", "2nd": "second", "3rd": "third", "4th": "fourth", "5th": "fifth",
}

#: Chat abbreviations of tone ("fwiw", "lmk"), left out of the search unless the docs use the word:
#: some are names too ("nvm" is Node Version Manager, "tbf" a Linux queueing discipline).
CHAT_ABBREVIATIONS: frozenset[str] = frozenset(
    "fwiw afaict iiuc ymmv tbf ftr ofc nvm lmk hth smh ikr irl idc".split())
