"""What a positive label means for the person: favourable (a loan granted, income above $50K) or
unfavourable (rearrest, default, arrest). It decides which group the words call disadvantaged: with a
favourable positive label the group with the lowest base rate, with an unfavourable one the group with
the highest (``targets.disadvantaged_group``).

The analyst says it with the label (``TaskSpec.positive_favourable``: the Data page's question,
``--positive-is`` on the command line). Where it is not said, it is read from the meaning the analyst
typed for the label (:func:`favourable_from_meaning`), and where that says nothing either, a positive
label is taken as favourable, and the words say that it was assumed.

The Data page does not assume: where neither the analyst's words nor the label's own words (its column name and
positive values, :func:`favourable_from_label`) answer it, it asks, and names no disadvantaged group until answered."""
from __future__ import annotations

import re

from ..errors import FairDashError

POSITIVE_IS = ("favourable", "unfavourable")
WORDS = {True: "favourable", False: "unfavourable"}
SAID, READ, ASSUMED = "said", "read from the label's meaning", "assumed"

_NOT = r"(?:not|no|never|without|non)[- ](?:an? |been |be |being |was |were |is )?"
_SAYS_UNFAVOURABLE = re.compile(r"\bun-?favou?rable\b|\b" + _NOT + r"favou?rable\b|\bbad for\b|\bharmful\b")
_SAYS_FAVOURABLE = re.compile(r"\bfavou?rable\b|\bgood for\b|\bbeneficial\b")
_PAY = r"\b(?:income|salary|wage|wages|earnings?)"  # a column name with its positive values: "salary >50K"
# outcomes that are bad for the person (stems: "rearrested", "defaulted", "recidivism" ...)
_BAD = re.compile(r"\b(?:re-?)?arrest|\brecidiv|\bre-?offend|\bdefault|\bconvict|\bjail|\bprison|\bincarcerat"
                  r"|\bdetain|\bdetention|\bfraud|\bdeath\b|\bdied\b|\bdies\b|\bmortality|\bdenied\b|\bdeny"
                  r"|\brejected?\b|\bevict|\bdelinquen|\bbankrupt|\breadmi|\bfired\b|\bdismissed\b|\bunemploy"
                  r"|\bviolat|\bcharged\b|\blate payment|\bdropp?ed out|\bfail|\brecid\b|"
                  + _PAY + r"\s*(?:<|below|under|less than|at most)")
# outcomes that are good for the person
_GOOD = re.compile(r"\bgrant|\bapprov|\bhired\b|\bhire\b|\baccepted\b|\badmitted\b|\bpromot|\baward|\bscholarship"
                   r"|\boffer|\bincome above|\bincome over|\bhigh income|\brepaid|\bsurviv|\brecover|\bpass(?:ed)?\b"
                   r"|\bgraduat|\bemployed\b|\bselected\b|" + _PAY + r"\s*(?:>|above|over|more than|at least)")


def _negated(text: str, m: re.Match) -> bool:
    return re.search(r"\b(?:not|no|never|without)\s+(?:\w+\s+)?$", text[:m.start()]) is not None


def favourable_from_meaning(meaning) -> bool | None:
    """Whether the analyst's words for a positive label say it is favourable for the person (True),
    unfavourable (False), or neither (None). An explicit "unfavourable" / "not favourable" wins, then
    "favourable", then outcome words: rearrest, default, arrest, conviction ... (unfavourable); granted,
    approved, hired, income above ... (favourable); "not" just before an outcome turns it round."""
    text = " ".join(str(meaning or "").lower().split())
    if not text:
        return None
    if _SAYS_UNFAVOURABLE.search(text):
        return False
    if _SAYS_FAVOURABLE.search(text):
        return True
    for pattern, value in ((_BAD, False), (_GOOD, True)):
        m = pattern.search(text)
        if m is not None:
            return (not value) if _negated(text, m) else value
    return None


def label_text(column, positive_values=(), threshold=None) -> str:
    """A label's own words, for :func:`favourable_from_label`: its column name (its ``_``, ``-`` and ``.`` read as
    spaces: ``two_year_recid`` -> "two year recid") with its positive values or threshold ("salary >50K")."""
    name = re.sub(r"[_\-.]+", " ", re.sub(r"([a-z])([A-Z])", r"\1 \2", str(column or ""))).strip()
    if threshold is not None:
        return f"{name} above {threshold:g}"
    return " ".join([name, " or ".join(map(str, positive_values))]).strip()


def favourable_from_label(meaning, column="", positive_values=(), threshold=None) -> tuple[bool | None, str]:
    """Whether a positive label is favourable for the person as its words say, and the words that say it:
    the meaning the analyst typed (:func:`favourable_from_meaning`), else the label's own words (:func:`label_text`:
    ``two_year_recid`` says rearrest, unfavourable; ``salary`` with ``>50K`` favourable); ``(None, "")`` where
    neither says. The Data page pre-fills its question with it and asks where it is None."""
    for words in (str(meaning or ""), label_text(column, positive_values, threshold)):
        said = favourable_from_meaning(words)
        if said is not None:
            return said, words
    return None, ""


def label_favourable(spec) -> tuple[bool, str]:
    """Whether a positive label of this task (a :class:`~fairdash.data.TaskSpec`) is favourable for the
    person, and how that is known: ``SAID`` (the analyst's answer), ``READ`` (from the meaning typed for
    the label) or ``ASSUMED`` (nothing says: taken as favourable)."""
    said = getattr(spec, "positive_favourable", None)
    if said is not None:
        return bool(said), SAID
    read = favourable_from_meaning(getattr(spec, "positive_meaning", ""))
    if read is not None:
        return read, READ
    return True, ASSUMED


def parse_positive_is(text, said_as: str = "What a positive label means for the person") -> bool | None:
    """``favourable`` -> True, ``unfavourable`` -> False (also favorable/unfavorable, any case); ``None``
    or empty -> None (not said); anything else is refused in one line, naming the setting as its caller says it
    (``said_as``: the command line names its flag; the library names no flag)."""
    if text is None or str(text).strip() == "":
        return None
    word = str(text).strip().lower().replace("favorable", "favourable")
    if word not in POSITIVE_IS:
        raise FairDashError(f"{said_as} must be favourable or unfavourable (is a positive label good or bad for the "
                            f"person?); got {str(text)!r}.")
    return word == "favourable"


def label_words(spec) -> str:
    """One clause for a task's positive label: "favourable for the person" with how it is known."""
    fav, how = label_favourable(spec)
    return f"{WORDS[fav]} for the person" + ("" if how == SAID else f" ({how})")


def disadvantaged_sentence(name: str, favourable: bool, how: str = SAID) -> str:
    """Why ``name`` is called the disadvantaged group: the lowest base rate of a favourable positive label,
    or the highest of an unfavourable one (plain text: the caller shows user text literally)."""
    if favourable:
        return (f"{name} is the disadvantaged group: it has the lowest base rate."
                + (" (A positive label is taken as favourable for the person: nothing says otherwise.)"
                   if how == ASSUMED else ""))
    return (f"{name} is the disadvantaged group: it has the highest base rate, and a positive label is unfavourable "
            f"for the person" + (" (read from the label's meaning)." if how == READ else "."))


# Outcomes whose opposite an analyst would name (issue 47, item 5): the stem of a positive label's words, the
# decision in those words, its opposite, and the rate's name. A positive label that is none of these keeps the
# generic words of :func:`error_words`.
_OUTCOMES = (
    (r"\bden(?:y|ied|ial)\b", "denied", "approved", "denial rate"),
    (r"\bapprov", "approved", "denied", "approval rate"),
    (r"\breleas", "released", "held", "release rate"),
    (r"\bdetain|\bdetention|\bheld\b|\bjail", "held", "released", "detention rate"),
    (r"\bhired?\b|\bhiring\b", "hired", "not hired", "hiring rate"),
    (r"\badmit|\badmission", "admitted", "not admitted", "admission rate"),
    (r"\bgrant", "granted", "refused", "grant rate"),
    (r"\baccept", "accepted", "rejected", "acceptance rate"),
    (r"\breject", "rejected", "accepted", "rejection rate"),
    (r"\bre-?arrest", "flagged for rearrest", "cleared", "rearrest rate"),
    (r"\barrest", "flagged for arrest", "cleared", "arrest rate"),
    (r"\brecid|\bre-?offend", "flagged as reoffending", "cleared", "recidivism rate"),
    (r"\bdefault", "flagged as defaulting", "cleared", "default rate"),
)
_GENERIC = {True: ("selected", "passed over"), False: ("flagged", "cleared")}


GENERIC_RATE = "positive rate"  # the positive rate's name where the label names no outcome


def outcome_words(spec) -> tuple[str, str, str]:
    """A task's positive and negative decisions and its positive rate in the analyst's words, from the meaning typed
    for the label, else the label's own words (:func:`label_text`): ``("denied", "approved", "denial rate")`` for
    "application denied", ``("released", "held", "release rate")`` for ``released = yes``; where neither names an
    outcome, by whether a positive is favourable: ``("selected", "passed over", "positive rate")`` or
    ``("flagged", "cleared", "positive rate")``."""
    for words in (str(getattr(spec, "positive_meaning", "") or ""),
                  label_text(getattr(spec, "y_column", ""), getattr(spec, "y1_values", ()) or (),
                             getattr(spec, "y_threshold", None))):
        text = " ".join(words.lower().split())
        for pattern, positive, negative, rate in _OUTCOMES:
            m = re.search(pattern, text)
            if m is not None and not _negated(text, m):
                return positive, negative, rate
    return (*_GENERIC[label_favourable(spec)[0]], GENERIC_RATE)


def error_words(spec=None, favourable: bool = True) -> dict[str, str]:
    """The error rates' names in the task's words (:func:`outcome_words`): a false positive is someone wrongly given
    the positive decision, ``"wrongly denied (FPR)"``; a false negative someone wrongly given the negative one,
    ``"wrongly approved (FNR)"``. Without a task (a results file alone), the generic words for a ``favourable`` or
    unfavourable positive label."""
    positive, negative = outcome_words(spec)[:2] if spec is not None else _GENERIC[bool(favourable)]
    return {"fpr": f"wrongly {positive} (FPR)", "fnr": f"wrongly {negative} (FNR)"}
