"""The Negotiate challenge parsing of the SPNEGO auth (``replication/fs/spnego.py``); the handshake itself runs
against a real Kerberized NameNode in tests/secure/test_hdfs_kerberos.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from replication.fs.spnego import _negotiate_token


def test_a_bare_negotiate_challenge_has_an_empty_token():
    assert _negotiate_token("Negotiate") == ""


def test_the_token_of_negotiate_is_found_among_other_schemes():
    assert _negotiate_token('Basic realm="x", Negotiate YII=') == "YII="
    assert _negotiate_token("negotiate  abc") == "abc"


def test_a_header_without_negotiate_offers_none():
    assert _negotiate_token("") is None
    assert _negotiate_token('Basic realm="hdfs"') is None


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_any_header_parses_to_a_token_or_none(header):
    token = _negotiate_token(header)
    assert token is None or "negotiate" in header.lower()
