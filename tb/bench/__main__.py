"""``python -m tb.bench``: see :mod:`tb.bench.suite`."""

import sys

from .suite import main

sys.exit(main())
