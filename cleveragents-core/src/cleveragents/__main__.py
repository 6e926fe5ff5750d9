"""``python -m cleveragents`` is the ``cleveragents`` command."""

import sys

from cleveragents.cli.main import main

sys.exit(main())
