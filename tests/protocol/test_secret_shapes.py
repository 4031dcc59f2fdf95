"""Secret-shaped strings are found without being loaded; ordinary posts are left alone.

Every fake token below is built from pieces so that secret scanners do not mistake this file for
a leak.
"""

import base64
import random
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from protocol.redaction import REDACTED, Redactor

ROUTER_SECRETS = [
    "moltbook_sk_" + "Zq8Rt5Lw2Kx9Pm4Vb7",
    "bsky-app-" + "pass-9f3k-2lm8",
    "r3ddit-" + "S3cret-Value-77",
    "masto-" + "tok-" + "AbCdEf0123456789",
    "redis-" + "router-pw-" + "x81b",
]
A36 = "aB3dE5gH7jK9mN1pQ2sT4vW6yZ8bC0dF2hJk"  # 36 mixed characters, no real token
SHAPES = {
    "aws access key id": "AKIA" + "IOSFODNN7EXAMPLX",
    "aws session key id": "ASIA" + "Y34FZKBOKMUTVV7A",
    "aws secret named": "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKX",
    "github classic": "ghp_" + A36,
    "github oauth": "gho_" + A36,
    "github fine-grained": "github_pat_" + "11ABCDEFG0" + "abcdefghijKLMNOPQRST_" + "a1b2c3d4e5f6g7h8i9",
    "gitlab": "glpat-" + "xY9z" + "Ab3dE5gH7jK9mN1p",
    "slack bot": "xoxb-" + "1234567890-" + "0987654321-" + "aBcDeFgHiJkLmNoP",
    "slack user": "xoxp-" + "1234567890-" + "abcdefghij",
    "slack app": "xapp-" + "1-A0123456789-" + "1234567890123-" + "abcdef0123456789",
    "slack webhook": "https://hooks.slack.com/services/" + "T01234567/" + "B01234567/" + "aBcDeFgHiJkLmNoPqRsT",
    "google api key": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "openai": "sk-" + "abcdefghijklmnop" + "qrstuvwxyz123456",
    "openai project": "sk-" + "proj-" + "Ab3dE5gH7jK9mN1pQ2sT4vW6",
    "anthropic": "sk-" + "ant-api03-" + "Ab3dE5gH7jK9mN1pQ2sT4vW6",
    "stripe": "sk_" + "live_" + "51Hb3dE5gH7jK9mN1pQ2sT4v",
    "hugging face": "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH",
    "npm": "npm_" + A36,
    "telegram bot": "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
    "jwt": "eyJ" + "hbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "jwt alg none": "eyJ" + "hbGciOiJub25lIn0." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.",
    "bearer header": "Authorization: " + "Bearer " + "abcdefghijklmnop.qrstu",
    "pem private key": "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEow" + "IBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
    "pem openssh key cut short": "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA",
    "password colon": "password: " + "hunter2",
    "passwd equals": "passwd=" + "letmein",
    "password is": "my password is " + "hunter22",
    "password quoted": 'PASSWORD = "' + "s3cr3t!" + '"',
    "api key named": "api_key=" + "abcd1234efgh",
    "client secret named": "client_secret: " + "9a8b7c6d5e4f",
    "german": "Passwort: " + "geheim123",
    "german kennwort": "Kennwort=" + "Sommer2024",
    "french": "mot de passe : " + "azerty123",
    "spanish": "contraseña: " + "clave1234",
    "portuguese": "senha: " + "minhasenha1",
    "italian": "la password: " + "Segreta99",
    "dutch": "wachtwoord: " + "geheim42",
    "polish": "hasło: " + "tajne123",
    "russian": "пароль: " + "qwerty123",
    "turkish": "şifre: " + "gizli1234",
    "chinese full-width colon": "密码：" + "abc12345",
    "japanese": "パスワード: " + "hunter22",
    "korean": "비밀번호: " + "secret99",
    "password at the end of a line": "the wifi password: " + "letmein\nsee you",
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_secret_shape_is_found_and_redacted(name):
    redactor = Redactor([])
    sample = SHAPES[name]
    assert redactor.finds(f"look: {sample} ok"), name
    out = redactor.text(f"look: {sample} ok")
    assert REDACTED in out and not redactor.finds(out), out


@pytest.mark.parametrize("name", ["github classic", "slack bot", "google api key", "openai project", "aws access key id"])
@pytest.mark.parametrize("spelling", ["url every byte", "json unicode", "html decimal"])
def test_a_secret_shape_in_another_spelling_is_found(name, spelling):
    sample = SHAPES[name]
    shown = {
        "url every byte": "".join(f"%{b:02x}" for b in sample.encode()),
        "json unicode": "".join(f"\\u{ord(c):04x}" for c in sample),
        "html decimal": "".join(f"&#{ord(c)};" for c in sample),
    }[spelling]
    assert Redactor([]).finds(f"here: {shown}")


def ordinary_posts():
    lines = (Path(__file__).parents[1] / "data" / "ordinary_posts.txt").read_text(encoding="utf-8").splitlines()
    unescape = re.compile(r"\\u([0-9a-fA-F]{4})")
    return [unescape.sub(lambda m: chr(int(m.group(1), 16)), line) for line in lines if line.strip()]


def image_data():
    blob = random.Random(7).randbytes(600)
    return "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + blob).decode()


MORE_ORDINARY = [
    "New palette for the site: #ff8800, #00AAFF, #1e1e1e and #FFF. Thoughts?",
    "Read it here: https://example.org/blog/2024/11/22/how-we-ship?utm_source=bsky&utm_medium=social&ref=a%20b",
    "Search: https://www.google.com/search?q=redis+acl+users&hl=en&tbm=isch#imgrc=Ab12Cd34",
    f"My avatar, inline: {image_data()}",
    "Fixed in commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39, see the changelog.",
    "Order id 550e8400-e29b-41d4-a716-446655440000 shipped today.",
    "A basic understanding of tokens is needed before the token economics talk.",
    "Password: must be at least 12 characters long, with a number.",
    "Reset your password at https://example.org/account/reset if you forgot it.",
    "The secret: patience. The token: trust. The key: practice.",
    "Bearer bonds were popular in the 1920s; a basic income is discussed again.",
    "Contract 0x71C7656EC7ab88b098defB751B7401B5f6d8976F is the community token, not a key.",
    "Skateboard review: the sk-8 deck is great, and the AK-47 is a rifle, not a key.",
    "Привет всем! Сегодня хорошая погода, идём гулять в парк.",
    "今日はいい天気ですね。公園に行きましょう！",
    "Call me at +1 (555) 010-9999 or email me at someone@example.org :)",
    "ISBN 978-3-16-148410-0, page 42, line 7. ¯\\_(ツ)_/¯ 🎉🎉",
    "Quick math: 2^10 = 1024 and 0xFF = 255; 50% off today & tomorrow!",
    "Use <b>bold</b> &amp; <i>italics</i> in HTML, or **bold** in Markdown.",
    "I love my bsky app, it passes every test on my moltbook feed 😍",
    "Meeting notes: api design review, key decisions, secret santa on Friday.",
    'Tip: never hardcode keys, write api_key = os.environ["API_KEY"] instead.',
    "const token = getToken(); // then pass it along",
    "In CI: password: ${{ secrets.DB_PASSWORD }} and locally PASSWORD=$DB_PASSWORD.",
]


@pytest.mark.parametrize("text", ordinary_posts() + MORE_ORDINARY)
def test_an_ordinary_post_is_not_taken_for_a_secret(text):
    redactor = Redactor(ROUTER_SECRETS)
    assert not redactor.finds(text), redactor.text(text)
    assert redactor.text(text) == text


@pytest.mark.parametrize("secret", ROUTER_SECRETS)
@pytest.mark.parametrize("spelling", ["plain", "url", "upper", "base64 of Bearer", "wrapped"])
def test_the_routers_own_credentials_in_a_post_are_found(secret, spelling):
    shown = {
        "plain": secret,
        "url": quote(secret, safe=""),
        "upper": secret.upper(),
        "base64 of Bearer": base64.b64encode(b"Bearer " + secret.encode()).decode(),
        "wrapped": secret[:6] + "\n" + secret[6:],
    }[spelling]
    redactor = Redactor(ROUTER_SECRETS)
    assert redactor.finds(f"Great news everyone! {shown} #blessed")
