"""``python -m benchmarks``: the runner (``benchmarks/run.py``)."""
from .run import main

raise SystemExit(main())
