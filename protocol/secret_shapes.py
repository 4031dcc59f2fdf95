"""Secrets known by their shape alone: provider API keys and tokens, private keys, and values a
text names as a password (in several languages).

Each pattern is written to leave ordinary prose alone: "a basic understanding", "the token
economics talk" or "Password: must be 12 characters long" are not secrets; "Bearer ab12...",
"passwd=letmein" and "Passwort: geheim123" are.

Speed: every shape starts with one of a few literal anchors; one Aho-Corasick pass over the
lower-cased text finds the anchors, and a shape's regex is tried only where its anchor is.
"""

from __future__ import annotations

import re

from ahocorasick_rs import AhoCorasick, MatchKind

from protocol.spellings import decode

_START = r"(?<![A-Za-z0-9_])"  # a boundary that also holds before CJK text (no spaces there)
# A value: not a reference to one (`$PASSWORD`, `${{ secrets.X }}`, `os.environ[...]`, `get()`).
_VALUE = r"""(?!\$|%\(|\{\{)[^\s"'`,;<>()\[\]{}]{4,}+(?![(\[{])"""
_QUOTE = r"""["'`]?"""
# Names of a secret, in English and in other languages (the mind may be told to write in any).
NAMES = (
    "password", "passwd", "passphrase", "passcode", "apikey", "aws_secret_access_key", "passwort",
    "kennwort", "mot de passe", "mdp", "contraseña", "contrasena", "senha", "palavra-passe",
    "wachtwoord", "hasło", "haslo", "heslo", "jelszó", "jelszo", "lösenord", "losenord", "passord",
    "adgangskode", "salasana", "şifre", "sifre", "пароль", "κωδικός", "密码", "密碼", "口令",
    "パスワード", "비밀번호", "mật khẩu", "mat khau", "kata sandi", "كلمة المرور", "סיסמה",
    *(f"{a}{sep}{b}" for a, b in [("api", "key"), ("api", "secret"), ("secret", "key"), ("client", "secret"),
                                  ("access", "token"), ("auth", "token"), ("refresh", "token"),
                                  ("private", "key")] for sep in ("_", "-", " ", "")),
)  # fmt: skip
_ASSIGNED_ONLY = ("secret", "token", "pwd")  # too common in prose to count before a colon
_NAME = "|".join(re.escape(n) for n in sorted(NAMES, key=len, reverse=True))
_ASSIGNED = "|".join(re.escape(n) for n in sorted((*NAMES, *_ASSIGNED_ONLY), key=len, reverse=True))
# After "name:", a value counts when it looks like one (a digit, a symbol, mixed case) or ends
# the line, so that "Password: must be at least 12 characters" stays prose.
_LOOKS_SECRET = r"(?=[^\s\"'`,;<>]*(?:[0-9!#$%*+/=?@^_|~\\-]|[a-z][A-Z]))"
_ENDS_LINE = r"(?=[.!?)]?[ \t]*(?:\n|$))"
# A credential after "Bearer": a digit or a symbol in it (so "basic understanding" is prose).
_CREDENTIAL = r"(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{{{},}}"
_AWS = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "ABIA", "ACCA")

# (anchors, pattern): every match of the pattern starts with one of its anchors (lower-cased).
_SHAPES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("sk-",), _START + r"sk-[A-Za-z0-9_-]{16,}"),  # OpenAI, Anthropic (sk-ant-), project keys
    (("sk_", "rk_"), _START + r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),  # Stripe
    (("bearer", "basic"), _START + r"(?i:bearer|basic)\s+" + _CREDENTIAL.format(12)),
    (("authorization",), _START + r"(?i:authorization\s*[:=]\s*(?:[a-z]+\s+)?)" + _CREDENTIAL.format(8)),
    (("eyj",), _START + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWT
    (("eyj",), _START + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),  # JWT, unsigned
    (("xox",), _START + r"xox[abposre]-[A-Za-z0-9-]{10,}"),  # Slack
    (("xapp-",), _START + r"xapp-\d-[A-Za-z0-9-]{10,}"),
    (("hooks.slack.com/",), r"hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
    (("gh",), _START + r"gh[pousr]_[A-Za-z0-9]{36,}"),  # GitHub
    (("github_pat_",), _START + r"github_pat_[A-Za-z0-9_]{22,}"),
    (("glpat-",), _START + r"glpat-[A-Za-z0-9_-]{20,}"),  # GitLab
    (tuple(a.lower() for a in _AWS), _START + "(?:" + "|".join(_AWS) + r")[0-9A-Z]{16}(?![A-Za-z0-9])"),
    (("aiza",), _START + r"AIza[0-9A-Za-z_-]{35}"),  # Google
    (("ya29.",), _START + r"ya29\.[0-9A-Za-z_-]{20,}"),
    (("gocspx-",), _START + r"GOCSPX-[0-9A-Za-z_-]{20,}"),
    (("hf_",), _START + r"hf_[A-Za-z0-9]{30,}"),  # Hugging Face
    (("npm_",), _START + r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    (("pypi-",), _START + r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    (("sg.",), _START + r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),  # SendGrid
    (("moltbook_sk_",), _START + r"moltbook_sk_[A-Za-z0-9_-]{8,}"),
    (("-----begin",), r"(?s:-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
                      r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*))"),
    # "passwd=letmein", "api_key = 'x1y2'", "?token=abc123": an assignment is always a secret.
    ((*NAMES, *_ASSIGNED_ONLY), _START + rf"(?i:(?:{_ASSIGNED})\s*=\s*){_QUOTE}{_VALUE}"),
    # "password: hunter2", "Passwort: geheim123", "密码：abc12345".
    (NAMES, _START + rf"(?i:(?:{_NAME})\s*[:：]\s*){_QUOTE}(?:{_LOOKS_SECRET}{_VALUE}|{_VALUE}{_ENDS_LINE})"),
    # "my password is hunter22".
    (("password", "passwd", "passphrase"),
     _START + rf"(?i:(?:password|passwd|passphrase)\s+(?:is|was)\s+){_QUOTE}"
     r"(?=[^\s\"'`,;<>]*[0-9!#$%*+/=?@^_|~\\-])[^\s\"'`,;<>]{6,}"),
)  # fmt: skip
# Telegram bot tokens (in URLs too) start with digits, not with a word (a digit class first
# lets the regex engine skip ahead quickly).
_UNANCHORED = (re.compile(r"[0-9]{6,12}:[A-Za-z0-9_-]{30,}"),)

TOKEN_PATTERNS: tuple[re.Pattern[str], ...] = (*(re.compile(p) for _, p in _SHAPES), *_UNANCHORED)
ANY_SHAPE = re.compile("|".join(f"(?:{p.pattern})" for p in TOKEN_PATTERNS))

_ANCHORS = sorted({a for anchors, _ in _SHAPES for a in anchors})
_BY_ANCHOR = [[TOKEN_PATTERNS[i] for i, (anchors, _) in enumerate(_SHAPES) if a in anchors] for a in _ANCHORS]
_AUTOMATON = AhoCorasick(_ANCHORS, matchkind=MatchKind.Standard)


def shape_spans(text: str) -> list[tuple[int, int]]:
    """Where the text holds a secret shape."""
    found = [m.span() for p in _UNANCHORED for m in p.finditer(text)] if ":" in text else []
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer: anchors would be misplaced
        return found + [m.span() for m in ANY_SHAPE.finditer(text)]
    for index, start, _ in _AUTOMATON.find_matches_as_indexes(lowered, overlapping=True):
        for pattern in _BY_ANCHOR[index]:
            match = pattern.match(text, start)
            if match:
                found.append(match.span())
    return found


# A run that holds a transport's escapes (URL `%XX`, JSON `\\uXXXX`, HTML `&#NN;`) and the
# characters between them: a shape in it is found once the run is decoded, and the whole run goes.
_ESCAPED_RUN = re.compile(
    r"(?:%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|&#[xX]?[0-9A-Fa-f]{1,6};?|[A-Za-z0-9._~+/=:-])*"
    r"(?:%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|&#[xX]?[0-9A-Fa-f]{1,6};?)"
    r"(?:%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|&#[xX]?[0-9A-Fa-f]{1,6};?|[A-Za-z0-9._~+/=:-])*"
)
_MAY_BE_ESCAPED = re.compile(r"%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|&#")


def escaped_shape_spans(text: str) -> list[tuple[int, int]]:
    """Where the text holds a secret shape written in a transport's escapes."""
    if not _MAY_BE_ESCAPED.search(text):
        return []
    return [run.span() for run in _ESCAPED_RUN.finditer(text) if shape_spans(decode(run.group()))]
