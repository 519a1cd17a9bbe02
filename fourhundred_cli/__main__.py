"""``python -m fourhundred_cli`` is the `fourhundred` command."""

from fourhundred_cli import main

raise SystemExit(main())
