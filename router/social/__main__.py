"""`python -m router.social`: run one command read from stdin, print one JSON object."""

import sys

from router.social import cli

if {"-h", "--help"} & set(sys.argv[1:]):
    print((cli.__doc__ or "").strip())
    raise SystemExit(0)
raise SystemExit(cli.main())
