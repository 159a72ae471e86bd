"""``python -m wanka`` runs the command line."""

import sys

from wanka.cli import main

sys.exit(main())
