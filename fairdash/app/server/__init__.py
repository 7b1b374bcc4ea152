"""The server's machinery behind the pages: the typed session state (``state``), each analyst's session and
its saved copy (``session``, ``session_store``), sign-in (``signin``), the server's limits and the settings'
help (``limits``, ``settings_help``), and trainings run in worker processes, one queue per server (``worker``,
``jobs``). Nothing here draws a page; the page glue is one level up, in ``fairdash.app``."""
