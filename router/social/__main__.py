"""`python -m router.social`: run one command read from stdin, print one JSON object."""

import sys

from protocol.ctrl_c import leave_on_ctrl_c

leave_on_ctrl_c()  # a Ctrl-C, at the start or later, ends it quietly (status 130), never a traceback

from router.social import cli  # noqa: E402

if {"-h", "--help"} & set(sys.argv[1:]):
    print((cli.__doc__ or "").strip())
    raise SystemExit(0)
raise SystemExit(cli.main())
