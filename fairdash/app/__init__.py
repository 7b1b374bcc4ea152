"""The dashboard's Streamlit glue: the only part of FairDash that imports ``streamlit``.

``ui`` (the session's task, cached loaders, error display), ``session`` (session state that survives
page changes and links), ``task_choices`` (the Data page's choices), ``views`` (readouts several pages
draw), ``compare`` (the Compare page's parts), ``jobs`` (training in the background, each training in
a worker process: ``worker``, plain Python) and ``session_store`` (saved sessions, in memory only).
Pages and ``app.py`` call these; the library below never imports them.
"""
