"""The one error type for user mistakes."""


class FairDashError(ValueError):
    """A problem with the user's input, worded for a non-programmer.

    The dashboard shows its message in an error box and the command line prints it on one line and
    exits non-zero; neither shows a traceback for it.
    """
