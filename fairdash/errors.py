"""The one error type for user mistakes, and the one line a person reads for any error (:func:`error_text`)."""
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

    ``reason``: which rule refused, as a short code for the server's event log (``table_budget``,
    ``memory_guard``, ``columns``, ``malformed``, ...); ``None`` where the caller's context says it. It travels
    with the error between processes (it is in the instance's ``__dict__``, which pickling keeps).
    """

    def __init__(self, *args, reason: str | None = None):
        if args and isinstance(args[0], str):
            args = (shorten_quoted(args[0]), *args[1:])
        super().__init__(*args)
        self.reason = reason

    def __reduce__(self):
        # sent between processes as it is (its message shortened once, here, not again on arrival; its reason kept)
        return _restored, (type(self), self.args, dict(self.__dict__))


def _restored(cls, args, state):
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


def error_text(exc: BaseException, prefix: str = "") -> str:
    """The message a person can act on for ``exc`` (one line, never a traceback)."""
    if isinstance(exc, FairDashError):
        return prefix + str(exc)
    if isinstance(exc, MemoryError):
        return prefix + "Out of memory: try a smaller table or fewer repeats."
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return (f"{prefix}Something unexpected went wrong ({type(exc).__name__}: {first}). "
            "Your data and choices are kept; please try again or change a setting.")
