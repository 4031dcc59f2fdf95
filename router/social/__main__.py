"""`python -m router.social`: run one command read from stdin, print one JSON object."""

from router.social.cli import main

raise SystemExit(main())
