"""`python -m router.audit verify [DIR] [--key-file FILE]`: check the audit log (`router.audit.verify`)."""

import sys

from router.audit.verify import main as verify_main


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "verify":
        print("usage: ./safeclaw python -m router.audit verify [DIR] [--key-file FILE]", file=sys.stderr)
        return 2
    return verify_main(args[1:])


if __name__ == "__main__":
    sys.exit(main())
