"""The loopback redirect listener, reached over real HTTP: it hands the code and state to the flow,
turns an authorization server's refusal into a reason, and answers nothing else."""

from __future__ import annotations

import httpx2
import pytest

from mcpmanager.core.auth.loopback import Loopback, SignInFailed


async def test_the_redirect_brings_the_code_and_state_back() -> None:
    async with Loopback() as loopback, httpx2.AsyncClient() as http:
        assert loopback.redirect_uri == f"http://127.0.0.1:{loopback.port}/callback"
        stray = await http.get(f"http://127.0.0.1:{loopback.port}/favicon.ico")
        assert stray.status_code == 404
        answer = await http.get(loopback.redirect_uri, params={"code": "c0de", "state": "st4te"})
        assert answer.status_code == 200 and "You can close this tab" in answer.text
        result = await loopback.result()
        assert (result.code, result.state) == ("c0de", "st4te")
        again = await http.get(loopback.redirect_uri, params={"code": "other", "state": "x"})
        assert again.status_code == 409  # one sign-in, one answer


async def test_a_refusal_is_the_sign_in_s_failure() -> None:
    async with Loopback() as loopback, httpx2.AsyncClient() as http:
        answer = await http.get(loopback.redirect_uri, params={"error": "access_denied", "state": "s"})
        assert answer.status_code == 400
        with pytest.raises(SignInFailed, match="access_denied"):
            await loopback.result()


async def test_a_taken_port_is_an_os_error() -> None:
    async with Loopback() as first:
        with pytest.raises(OSError):
            await Loopback(first.port).__aenter__()
