"""The dashboard's Streamlit glue: the only part of FairDash that imports ``streamlit``.

``ui`` (the session's task, cached loaders, error display), ``session`` (session state that survives
page changes and links), ``task_choices`` (the Data page's choices), ``views`` (readouts several pages
draw), ``compare`` (the Compare page's parts and figures), ``train_form`` (the Train page's defaults, offers,
request and plan), ``export`` (the Export page's files), ``server.jobs`` (training in the background, each training in
a worker process: ``training.worker``, plain Python) and ``session_store`` (saved sessions, in memory only).
Pages and ``app.py`` call these, one function per action, and import nothing else of FairDash but
``fairdash.errors`` (``tests/test_structure.py``); the library below never imports them.
"""
