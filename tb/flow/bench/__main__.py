"""``python -m tb.flow.bench``: see :mod:`tb.flow.bench.suite`."""

import sys

from .suite import main

sys.exit(main())
