"""``python -m <package>.flow.farm``: :func:`.cli.main`."""

import sys

from .cli import main

sys.exit(main())
