"""`./safeclaw social`: run one command read from stdin, print one JSON object."""

import sys

from protocol.ctrl_c import leave_on_ctrl_c

leave_on_ctrl_c()  # a Ctrl-C, at the start or later, ends it quietly (status 130), never a traceback

from router.social import cli  # noqa: E402
from router.social.usage import TYPE_ONE_COMMAND, usage  # noqa: E402

if {"-h", "--help"} & set(sys.argv[1:]):
    print(usage())
    raise SystemExit(0)
if sys.stdin.isatty():  # stderr: stdout holds only the one JSON answer
    print(TYPE_ONE_COMMAND, file=sys.stderr, flush=True)
raise SystemExit(cli.main())
