"""The one error type for user mistakes."""
import re

LONGEST_QUOTED = 80  # a quoted name longer than this is shortened in messages (a column name can be 10,000 long)

_QUOTED = re.compile(r"'[^'\n]{%d,}'|\"[^\"\n]{%d,}\"" % (LONGEST_QUOTED + 1, LONGEST_QUOTED + 1))


def shorten(name, limit: int = LONGEST_QUOTED) -> str:
    """``name`` as text, cut to ``limit`` characters with the full length said: what a message quotes."""
    text = str(name)
    if len(text) <= limit:
        return text
    return f"{text[:limit - 20]}… ({len(text):,} characters)"


def shorten_quoted(message: str) -> str:
    """Every quoted run longer than :data:`LONGEST_QUOTED` characters in ``message``, shortened."""
    return _QUOTED.sub(lambda m: m.group(0)[0] + shorten(m.group(0)[1:-1]) + m.group(0)[-1], str(message))


class FairDashError(ValueError):
    """A problem with the user's input, worded for a non-programmer.

    The dashboard shows its message in an error box and the command line prints it on one line and
    exits non-zero; neither shows a traceback for it. A quoted name (a column, a value, a file name)
    longer than :data:`LONGEST_QUOTED` characters is shortened here, for every message, so that a
    refusal stays readable whatever the table's names are.
    """

    def __init__(self, *args):
        if args and isinstance(args[0], str):
            args = (shorten_quoted(args[0]), *args[1:])
        super().__init__(*args)
