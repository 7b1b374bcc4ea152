"""Trainings off the pages, without Streamlit: the worker process each training runs in (``worker``). The training
queue and the sidebar's box are in ``fairdash.app.server.jobs``."""
