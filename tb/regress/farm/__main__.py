"""``python -m <package>.regress.farm``: :func:`.cli.main`."""

import sys

from .cli import main

sys.exit(main())
