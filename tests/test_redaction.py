"""Egress redaction: known secret shapes never leave, everything else is left alone."""

from __future__ import annotations

import copy
import string
from collections import OrderedDict, namedtuple
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.redaction import REDACTED, redact_egress

SECRETS = {
    "openai": "sk-proj-Q3v9Xk2LmN8pR4tY7wZ1aB5c",
    "openai legacy": "sk-" + "Ab3" * 16,
    "anthropic": "sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1-Jh0",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "github classic": "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
    "github oauth": "gho_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2",
    "github fine-grained": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "slack bot": "xoxb-2048-4096-Ab1Cd2Ef3Gh4",
    "slack app": "xapp-1-A0123-4567-abcdef",
    "aws access key": "AKIAIOSFODNN7EXAMPLE",
    "aws session key": "ASIAY34FZKBOKMUTVV7A",
    "google": "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "huggingface": "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("secret", SECRETS.values(), ids=SECRETS.keys())
def test_vendor_key_formats_are_removed(secret: str) -> None:
    text = f"here is the credential: {secret} — keep it safe"
    assert redact_egress(text) == f"here is the credential: {REDACTED} — keep it safe"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abcdef0123456789abcd", "Authorization: Bearer [redacted]"),
        ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZDEyMw=='", None),
        ("OPENAI_API_KEY=not-a-vendor-key-9876", "OPENAI_API_KEY=[redacted]"),
        ('{"api_key": "internal-1234-secret"}', '{"api_key": "[redacted]"}'),
        ("password: hunter22", "password: [redacted]"),
        ("client_secret = 'Zm9vYmFy!'", "client_secret = '[redacted]'"),
        ("export GITHUB_TOKEN=abc123def456", "export GITHUB_TOKEN=[redacted]"),
        ("x-api-key: 0123abcd4567", "x-api-key: [redacted]"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key = [redacted]"),
        (
            "postgres://admin:s3cr3t-pw@db.internal:5432/app",
            "postgres://admin:[redacted]@db.internal:5432/app",
        ),
    ],
)
def test_headers_assignments_and_url_passwords_keep_their_names(
    text: str, expected: str | None
) -> None:
    result = redact_egress(text)
    if expected is None:
        assert "dXNlcjpwYXNzd29yZDEyMw" not in result and "Basic [redacted]" in result
    else:
        assert result == expected


def test_pem_private_keys_are_removed_whole() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n" * 3
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----"
    assert redact_egress(f"key:\n{pem}\nthanks") == f"key:\n{REDACTED}\nthanks"
    unterminated = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}and then the log goes on"
    assert redact_egress(f"start {unterminated}") == f"start {REDACTED}"
    public = (
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n"
        "-----END PUBLIC KEY-----"
    )
    assert redact_egress(public) == public


@pytest.mark.parametrize(
    "text",
    [
        "User prefers dark mode and uses Python 3.11",
        "Token authentication uses Authorization header",
        "Store API keys in environment variables, not code",
        "max_tokens: 4096, total_tokens: 1234",
        "tokenizer: cl100k_base",
        "password: ${DB_PASSWORD}",
        "api_key: null",
        "use sk-learn-is-a-great-library-for-ml",
        "the risk-assessment-framework-2024-final is due",
        "Basic internationalization support",
        "git commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "https://example.com/path?query=1",
        "eyJhbGciOiJIUzI1NiJ9 is just a base64 header",
        "short",
        "",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_egress(text) is text


def test_inline_media_passes_through() -> None:
    data = "data:image/png;base64,iVBORw0KGgo" + SECRETS["openai"]
    assert redact_egress(data) is data


def test_structures_are_walked_and_copied_only_where_they_change() -> None:
    untouched = {"role": "system", "content": "be brief"}
    messages = [
        untouched,
        {"role": "user", "content": f"my key {SECRETS['openai']}", "n": 3},
        {"role": "tool", "content": ("ok", f"token={SECRETS['slack bot']}")},
    ]
    before = copy.deepcopy(messages)
    result = redact_egress(messages)
    assert messages == before
    assert result is not messages
    assert result[0] is untouched
    assert result[1] == {"role": "user", "content": "my key [redacted]", "n": 3}
    assert result[2]["content"] == ("ok", "token=[redacted]")
    clean = [{"role": "user", "content": "nothing secret"}]
    assert redact_egress(clean) is clean


def test_container_types_survive() -> None:
    Pair = namedtuple("Pair", "left right")
    value = {
        "ordered": OrderedDict(a=SECRETS["google"]),
        "pair": Pair("fine", SECRETS["github classic"]),
        "keys are kept": {SECRETS["aws access key"]: 1},
        "number": 7,
        "none": None,
    }
    result = redact_egress(value)
    assert type(result["ordered"]) is OrderedDict and result["ordered"]["a"] == REDACTED
    assert result["pair"] == Pair("fine", REDACTED) and type(result["pair"]) is Pair
    assert result["keys are kept"] is value["keys are kept"]
    assert result["number"] == 7 and result["none"] is None


def test_a_removed_token_is_removed_everywhere_in_the_hand_off() -> None:
    token = "Zq8Lm3Np7Rt2Vx6Bc9Df4Gh"
    hand_off = (
        f"Authorization: Bearer {token}",
        [{"role": "tool", "content": f"echo {token} > /tmp/out"}],
        f"data:text/plain,{token}",
    )
    result = redact_egress(hand_off)
    assert result[0] == "Authorization: Bearer [redacted]"
    assert result[1] == [{"role": "tool", "content": "echo [redacted] > /tmp/out"}]
    assert result[2] == hand_off[2]  # inline media still passes through
    # A separate hand-off does not know about the token.
    assert redact_egress(f"echo {token}") == f"echo {token}"


def test_cycles_and_absurd_nesting_are_replaced_not_followed() -> None:
    loop: list[Any] = ["x"]
    loop.append(loop)
    result = redact_egress(loop)
    assert result[0] == "x" and isinstance(result[1], str) and "cyclic" in result[1]
    assert loop[1] is loop
    deep: Any = "bottom"
    for _ in range(200):
        deep = [deep]
    walked = redact_egress(deep)
    depth = 0
    while isinstance(walked, list):
        walked, depth = walked[0], depth + 1
    assert depth == 64 and "nested too deeply" in walked


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "hostile",
    [
        "ask-" * 50_000,
        "eyJ" * 60_000 + ".",
        "eyJabcdefghij." * 15_000,
        "token: " * 30_000,
        "Bearer " * 30_000,
        "a://" * 50_000,
        "x://u:" * 30_000,
        "-----BEGIN RSA PRIVATE KEY-----" * 6_000,
        "AKIA" * 50_000,
        "api_key=" * 25_000,
        "sk-" + "a-" * 100_000,
    ],
    ids=lambda text: repr(text[:12]),
)
def test_hostile_input_is_scanned_in_linear_time(hostile: str) -> None:
    # Quadratic patterns would take minutes on 200 kB; the timeout marker catches them.
    assert isinstance(redact_egress(hostile), str)


@pytest.mark.timeout(60)
def test_many_distinct_secrets_in_a_long_transcript_are_removed_in_linear_time() -> None:
    # Each removed token is looked for in every string; checking every token against
    # every string took minutes for a transcript with thousands of keys.
    keys = [f"{index:05d}Zq8Lm3Np7Rt2Vx6B" for index in range(20_000)]
    transcript = [
        {"role": "tool", "content": f"line {i}: token={key}"} for i, key in enumerate(keys)
    ]
    transcript.append({"role": "user", "content": " ".join(keys[:50])})
    result = redact_egress(transcript)
    assert result[7] == {"role": "tool", "content": "line 7: token=[redacted]"}
    assert result[-1]["content"] == " ".join([REDACTED] * 50)


def test_overlapping_removed_tokens_leave_no_fragment() -> None:
    first, second = "AAAA1111BBBB2222CCCC", "CCCC3333DDDD4444"
    hand_off = [f"api_key={first}", f"secret: {second}", f"both: {first}3333DDDD4444 end"]
    assert redact_egress(hand_off)[2] == f"both: {REDACTED} end"


# ---------------------------------------------------------------- properties

BASE62 = string.ascii_letters + string.digits


def random_body(size: int, alphabet: str = BASE62) -> st.SearchStrategy[str]:
    """Vendor key bodies are random: force at least one digit and mixed case."""
    return st.text(alphabet=alphabet, min_size=size, max_size=size + 20).map(
        lambda body: "7Qa" + body[3:] if len(body) >= 3 else body
    )


SECRET_STRATEGIES = [
    random_body(24).map(lambda b: "sk-" + b),
    random_body(24).map(lambda b: "sk-proj-" + b),
    random_body(40, BASE62 + "-_").map(lambda b: "sk-ant-api03-" + b),
    random_body(36).map(lambda b: "ghp_" + b),
    random_body(30, BASE62 + "_").map(lambda b: "github_pat_" + b),
    random_body(16, BASE62 + "-").map(lambda b: "xoxb-" + b),
    st.text(alphabet=string.ascii_uppercase + string.digits, min_size=16, max_size=16).map(
        lambda b: "AKIA" + b
    ),
    st.text(alphabet=BASE62 + "-_", min_size=35, max_size=35).map(lambda b: "AIza" + b),
    random_body(34).map(lambda b: "hf_" + b),
    st.tuples(random_body(10), random_body(10), random_body(10)).map(
        lambda parts: "eyJ" + ".".join(parts)
    ),
    random_body(20, BASE62 + "-._~+/").map(lambda b: "Bearer Z9" + b),
]
PROSE = st.text(alphabet=string.ascii_lowercase + " .,!?'\n", max_size=60)


@settings(max_examples=300, deadline=None)
@given(
    secret=st.one_of(SECRET_STRATEGIES),
    before=PROSE,
    after=PROSE,
    shape=st.sampled_from(["str", "message", "nested"]),
)
def test_no_known_format_secret_survives(secret: str, before: str, after: str, shape: str) -> None:
    text = f"{before} {secret} {after}"
    value: Any = {
        "str": text,
        "message": {"role": "user", "content": text},
        "nested": [{"content": ("intro", [text])}, "tail"],
    }[shape]
    snapshot = copy.deepcopy(value)
    result = redact_egress(value)
    payload = secret.removeprefix("Bearer ")
    assert payload not in repr(result)
    assert value == snapshot


MARKERS = (
    # key prefixes, auth schemes, URLs, PEM, and the names an assignment must end with
    *("sk-", "k_live_", "k_test_", "gh", "xox", "xapp-", "akia", "asia", "aiza", "hf_", "eyj"),
    *("bearer", "basic", "://", "-----"),
    *("key", "secret", "token", "passw", "pwd", "credential"),
)


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.text(alphabet=string.ascii_letters + string.digits + " .,!?'()\n:=-_/@", max_size=80),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.text(max_size=5), children, max_size=4)
            | st.tuples(children, children)
        ),
        max_leaves=12,
    )
)
def test_text_without_secret_markers_is_returned_unchanged(value: Any) -> None:
    # Every pattern needs one of MARKERS (case-insensitively) to match.
    if any(marker in repr(value).lower() for marker in MARKERS):
        return
    snapshot = copy.deepcopy(value)
    assert redact_egress(value) is value
    assert value == snapshot


def test_log_records_shown_by_the_cli_have_url_passwords_and_keys_removed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    from hermes_core.redaction import RedactingLogFilter

    record = logging.LogRecord(
        "httpx",
        logging.INFO,
        __file__,
        1,
        'HTTP Request: POST %s "%s"',
        ("http://admin:Hunter2PASSWORD@127.0.0.1:9/v3/peers", "HTTP/1.1 200 OK"),
        None,
    )
    assert RedactingLogFilter().filter(record) is True
    assert "Hunter2PASSWORD" not in record.getMessage()
    assert "http://admin:[redacted]@127.0.0.1:9/v3/peers" in record.getMessage()
    plain = logging.LogRecord("x", logging.INFO, __file__, 1, "nothing %s", ("here",), None)
    RedactingLogFilter().filter(plain)
    assert (plain.msg, plain.args) == ("nothing %s", ("here",))


def test_the_cli_scrubs_what_its_log_handlers_show(hermes_home: Path) -> None:
    import logging

    from click.testing import CliRunner

    from hermes_core.cli import _scrub_log_record, cli

    root = logging.getLogger()
    saved = list(root.handlers)
    root.handlers.clear()
    try:
        CliRunner().invoke(cli, ["-v", "plugins"], catch_exceptions=False)
        assert root.handlers and all(_scrub_log_record in h.filters for h in root.handlers)
    finally:
        root.handlers[:] = saved
    record = logging.LogRecord(
        "httpx", logging.INFO, __file__, 1, "GET %s", ("https://u:pw-Secret-123@h/x",), None
    )
    assert _scrub_log_record(record) and "pw-Secret-123" not in record.getMessage()
