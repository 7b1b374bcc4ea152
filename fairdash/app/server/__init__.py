"""The server's machinery behind the pages: the typed session state (``state``), each analyst's session and
its saved copy (``session``, ``session_store``), sign-in (``signin``), the server's limits and the settings'
help (``limits``, ``settings_help``), and the trainings' queue with its sidebar box (``jobs``; each training runs
in a worker process, ``fairdash.app.training.worker``). Nothing here draws a page; the page glue is one level up,
in ``fairdash.app``."""
