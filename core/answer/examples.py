"""A chat message asking for an example: "can you show an example?", "got a code sample?".

Its words ("show", "example") name no subject: searched or weighed, they find the docs' every
"for example" sentence instead of the code the asker wants.
"""

from __future__ import annotations

import re

#: What names an example: "an example", "sample code", "a code snippet".
_EXAMPLE = r"(?:(?:code\s+)?(?:examples?|samples?|snippets?)|sample\s+code|example\s+code)"
#: Words between the asking and the example: "show *me a quick* example", "give *a couple of* examples".
_BETWEEN = r"(?:\s+(?:me|us|a|an|the|some|any|more|couple|few|of|quick|short|simple|small|full|working)\b)*"
#: What may follow the example asked for: the message's end, a mark, or what it is an example of
#: ("an example of a retry", "... for the callback"). "an example app", "example.com", "examples/"
#: and "a sample rate" name things.
_AFTER = r"(?=\s*(?:$|[?!,;:)]|\.(?!\w)|\b(?:of|for|on|with|how|that|to|showing|using|in|pls|please|plz)\b))"
#: Asking for one: "can you show an example", "got a code sample?", "any examples?", "example pls";
#: "for example" gives one, "I have an example where ..." tells of one.
_ASKS_EXAMPLE = re.compile(
    r"(?:\b(?:(?:can|could|would)\s+(?:you|u)\s+)?(?:show|give|got|have|share|post|paste|provide|need|want|any)"
    rf"\b{_BETWEEN}\s*|^\W*){_EXAMPLE}\b{_AFTER}(?:\W*(?:pls|please|plz)\b)?",
    re.IGNORECASE)


def asks_for_example(message: str) -> bool:
    """Whether ``message`` asks for an example: the answer should show code, not say "for example"."""
    return _ASKS_EXAMPLE.search(message) is not None


def without_example_request(text: str) -> str:
    """``text`` without its request for an example, whose words ("show", "example") name no subject."""
    return " ".join(_ASKS_EXAMPLE.sub(" ", text).split())
