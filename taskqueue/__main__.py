"""`python -m taskqueue` runs the `signoff` command line."""

from taskqueue.cli import main

raise SystemExit(main())
