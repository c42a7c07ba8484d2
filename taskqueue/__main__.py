"""`python -m taskqueue` runs the `signoff` command line."""

from taskqueue.cli.main import main

raise SystemExit(main())
