"""``python -m gpudirect_cosim.flow.runner``: see :mod:`.cli`."""

import sys

from .cli import main

sys.exit(main())
