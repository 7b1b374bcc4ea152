"""The command line, ``python -m fairdash`` (``main``): ``main`` parses and dispatches, ``options`` holds
the arguments every command shares, ``model_commands`` the commands that train, predict and report, ``printed``
what ``train`` and ``sweep`` print in words."""
from .main import main

__all__ = ["main"]
