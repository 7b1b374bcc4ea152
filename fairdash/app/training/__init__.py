"""Trainings off the pages, without Streamlit: the server's training queue (``queue``: its settings, the jobs, their
turns, cancelling, the memory watch) and the worker process each training runs in (``worker``). The session's side
of a training and the sidebar's box are Streamlit's, in ``fairdash.app.server.jobs``."""
