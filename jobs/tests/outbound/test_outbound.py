"""Webhooks reach public addresses only (jobs/outbound/rules.py), checked when a job is
validated and again, on the address actually connected to, when an alert is sent; one
deadline for a whole delivery; no proxies. Real sockets on 127.0.0.1, all bounded."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest
from django.core.exceptions import ValidationError

from jobs import alerts
from jobs.alerts import InlineDispatcher
from jobs.models import Job, NotificationAttempt
from jobs.tests import personas
from jobs.tests.api_helpers import finish_run, token_client, webhook_server
from jobs.tests.factories import make_job
from jobs.tests.forms import admin_form
from jobs.tests.processes import wait_until

pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs/"
PAYLOAD = {"event": "failure"}
PUBLIC = "93.184.216.34"  # a global unicast address (documentation's example.com)

INTERNAL_URLS = [
    "http://127.0.0.1/hook",
    "http://127.8.9.10:8080/hook",
    "http://10.1.2.3/hook",
    "http://172.16.0.1/hook",
    "http://172.31.255.254/hook",
    "http://192.168.1.1/hook",
    "http://100.64.0.1/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://0.0.0.0:8000/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://[::1]/hook",
    "http://[fd00::1]/hook",
    "http://[fe80::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://[::]/hook",
    "https://localhost/hook",
    "http://localhost:8000/hook",
    "http://api.localhost/hook",
]


@pytest.fixture
def superuser():
    return personas.superuser()


@pytest.fixture
def api(superuser):
    return token_client(superuser)


@pytest.fixture
def inline_alerts():
    previous = alerts.use_dispatcher(InlineDispatcher(wait=lambda seconds: False))
    yield
    alerts.use_dispatcher(previous)


@contextmanager
def resolving(monkeypatch, answers: dict[str, str]) -> Iterator[None]:
    """socket.getaddrinfo answers `answers` (name -> address) for those names; other
    names resolve as usual. Stands in for DNS, which a test cannot set."""
    real = socket.getaddrinfo

    def fake(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(host, str) and host in answers:
            address = answers[host]
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sockaddr = (address, port, 0, 0) if family == socket.AF_INET6 else (address, port)
            return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)]
        return real(host, port, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", fake)
        yield


def hooked(url: str) -> Job:
    return Job(name="hooked", command="echo", interval=5, interval_unit="minute", webhook_url=url)


def webhook_error(url: str) -> list[str]:
    with pytest.raises(ValidationError) as refused:
        hooked(url).full_clean()
    return refused.value.message_dict.get("webhook_url", [])


# --- at validation -----------------------------------------------------------------------


@pytest.mark.parametrize("url", INTERNAL_URLS)
def test_a_webhook_to_an_internal_address_is_refused_at_the_field(url):
    messages = webhook_error(url)
    assert messages, url
    assert "public addresses" in messages[0]


@pytest.mark.parametrize("url", ["http://10.0.0.7/hook", "http://[fd12::7]/hook"])
def test_the_api_answers_400_at_the_webhook_url(api, url):
    response = api.post(
        JOBS,
        {
            "name": "hooked",
            "command": "echo",
            "schedule_type": "interval",
            "interval": 5,
            "interval_unit": "minute",
            "notify_on_failure": True,
            "webhook_url": url,
        },
        format="json",
    )
    assert response.status_code == 400
    assert "public addresses" in response.json()["webhook_url"][0]
    assert not Job.objects.exists()


def test_the_admin_shows_the_refusal_at_the_field(client, superuser):
    client.force_login(superuser)
    job = make_job(name="reports")
    form = admin_form(
        name="reports",
        command=job.command,
        notify_on_failure="on",
        webhook_url="http://169.254.169.254/latest/meta-data/",
        notify_emails="",
    )
    page = client.post(f"/admin/jobs/job/{job.pk}/change/", form)
    assert page.status_code == 200
    assert "Alerts may only go to public addresses" in page.text
    job.refresh_from_db()
    assert job.webhook_url == ""


def test_a_name_resolving_to_a_private_address_is_refused(monkeypatch):
    with resolving(monkeypatch, {"intranet.example.com": "10.20.30.40"}):
        messages = webhook_error("https://intranet.example.com/hook")
    assert "intranet.example.com resolves to 10.20.30.40" in messages[0]


def test_a_public_name_and_a_name_that_does_not_resolve_are_accepted(monkeypatch):
    with resolving(monkeypatch, {"hooks.example.com": PUBLIC}):
        hooked("https://hooks.example.com/x").full_clean()
    # Not resolvable now (offline, not yet in DNS): accepted, checked again when sending.
    hooked("https://no-such-host.invalid/x").full_clean()


def test_allowed_hosts_accept_an_internal_receiver(settings, monkeypatch):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["alerts.internal", "127.0.0.1", "[::1]"]
    with resolving(monkeypatch, {"alerts.internal": "10.0.0.9"}):
        for url in ("http://alerts.internal:9000/x", "http://127.0.0.1:9/x", "http://[::1]/x"):
            hooked(url).full_clean()
    assert webhook_error("http://10.0.0.9/x")  # the address itself is not listed


def test_an_unchanged_webhook_is_not_looked_up_again(monkeypatch):
    job = make_job(webhook_url="https://hooks.example.com/x")  # saved before, unchecked
    with resolving(monkeypatch, {"hooks.example.com": "10.0.0.1"}):
        job.name = "renamed"
        job.full_clean()  # the host is checked when the URL changes, and at send time
        job.webhook_url = "https://hooks.example.com/y"
        with pytest.raises(ValidationError):
            job.full_clean()


# --- at send time --------------------------------------------------------------------------


@dataclass
class Listener:
    """A TCP listener on 127.0.0.1 that counts connections and answers each with
    `answer` (sent in `chunk`-byte pieces every `pause` seconds)."""

    answer: bytes = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"
    chunk: int = 0
    pause: float = 0.0
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    port: int = 0


@contextmanager
def listener(**options: object) -> Iterator[Listener]:
    state = Listener(**options)  # type: ignore[arg-type]
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.05)
    state.port = server.getsockname()[1]
    stop = threading.Event()

    def serve_one(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                state.requests.append(read_request(conn))
                if not state.chunk:
                    conn.sendall(state.answer)
                    return
                for start in range(0, len(state.answer), state.chunk):
                    if stop.wait(state.pause):
                        return
                    conn.sendall(state.answer[start : start + state.chunk])
            except OSError:
                return  # the client hung up

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            state.connections += 1
            threading.Thread(target=serve_one, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


def test_a_name_that_resolves_to_loopback_at_send_time_is_not_connected_to(monkeypatch):
    """DNS rebinding: public when the job was saved, 127.0.0.1 when the alert goes."""
    with listener() as local:
        url = f"http://rebind.example.com:{local.port}/hook"
        with resolving(monkeypatch, {"rebind.example.com": PUBLIC}):
            hooked(url).full_clean()
        with resolving(monkeypatch, {"rebind.example.com": "127.0.0.1"}):
            ok, code, error = alerts.post_webhook(url, PAYLOAD)
    assert (ok, code) == (False, None)
    assert error == "refused: rebind.example.com resolves to 127.0.0.1, not a public address"
    assert local.connections == 0


def test_localhost_at_send_time_is_refused_and_recorded_as_failed(
    inline_alerts, django_capture_on_commit_callbacks, settings
):
    settings.JOBS_ALERT_ATTEMPTS = 3
    with listener() as local:
        # Saved without validation (as by an older version): the sender still refuses.
        job = make_job(notify_on_failure=True, webhook_url=f"http://localhost:{local.port}/x")
        with django_capture_on_commit_callbacks(execute=True):
            run = finish_run(job, succeeded=False)
    assert local.connections == 0
    recorded = list(NotificationAttempt.objects.filter(run=run))
    # A refusal is final: not tried again.
    assert [(a.status, a.response_code) for a in recorded] == [("failed", None)]
    assert recorded[0].error == "refused: localhost is a local name"
    assert recorded[0].target == f"http://localhost:{local.port}"


def test_an_allowed_host_is_reached_on_the_address_that_was_checked(settings, monkeypatch):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["receiver.internal"]
    with listener() as local, resolving(monkeypatch, {"receiver.internal": "127.0.0.1"}):
        ok, code, error = alerts.post_webhook(
            f"http://receiver.internal:{local.port}/hook?token=abc", PAYLOAD
        )
    assert (ok, code, error) == (True, 204, "")
    assert local.connections == 1
    request = local.requests[0].decode()
    assert request.startswith("POST /hook?token=abc HTTP/1.1\r\n")
    assert f"Host: receiver.internal:{local.port}\r\n" in request


def test_the_connection_goes_to_the_vetted_address_not_a_second_lookup(settings, monkeypatch):
    """The name is resolved once: what was checked is what is connected to, so a second
    answer (rebinding between the check and the connect) is never asked for."""
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["receiver.internal"]
    real = socket.getaddrinfo
    lookups: list[str] = []

    def counted(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
        if host == "receiver.internal":
            lookups.append(host)
            return real("127.0.0.1", port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    with listener() as local, monkeypatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", counted)
        ok, _, error = alerts.post_webhook(f"http://receiver.internal:{local.port}/", PAYLOAD)
    assert ok, error
    assert lookups == ["receiver.internal"]
    assert local.connections == 1


def test_a_server_that_trickles_its_answer_is_cut_off_at_the_total_deadline(settings):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_ALERT_TIMEOUT_SECONDS = 1
    # One byte every 50 ms: each read is quick, the whole answer would take ~20 s; cut
    # off at the deadline, far sooner (the margin is for a loaded machine).
    answer = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 400 + b"\r\n\r\n"
    with listener(answer=answer, chunk=1, pause=0.05) as slow:
        began = time.monotonic()
        ok, code, error = alerts.post_webhook(f"http://127.0.0.1:{slow.port}/", PAYLOAD)
        elapsed = time.monotonic() - began
        # The listener's thread counts the connection when it gets to run.
        wait_until(lambda: slow.connections == 1, 10)
    assert (ok, code) == (False, None)
    assert error == "timed out: no answer within 1 s"
    assert elapsed < 1 + 4


def test_a_silent_server_times_out_too(settings):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_ALERT_TIMEOUT_SECONDS = 0.3
    with listener(answer=b"H", chunk=1, pause=10) as silent:
        began = time.monotonic()
        ok, _, error = alerts.post_webhook(f"http://127.0.0.1:{silent.port}/", PAYLOAD)
        assert time.monotonic() - began < 0.3 + 0.5
    assert not ok and error.startswith("timed out")


def test_proxies_in_the_environment_are_not_used(settings, monkeypatch):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    with listener() as proxy, webhook_server() as hook:
        for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        ok, code, _ = alerts.post_webhook(hook.url, PAYLOAD)
    assert (ok, code) == (True, 200)
    assert hook.received == [PAYLOAD]
    assert proxy.connections == 0


def test_redirects_are_not_followed_and_bodies_not_read(settings):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    answer = (
        b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/elsewhere\r\n"
        b"Content-Length: 100000000\r\n\r\n" + b"x" * 1000
    )
    with listener(answer=answer) as moved:
        ok, code, error = alerts.post_webhook(f"http://127.0.0.1:{moved.port}/", PAYLOAD)
    assert (ok, code, error) == (False, 302, "HTTP 302 Found")
    assert moved.connections == 1


def test_a_reason_phrase_with_control_characters_is_stored_cleaned(
    settings, inline_alerts, django_capture_on_commit_callbacks
):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_ALERT_ATTEMPTS = 1
    answer = (
        b"HTTP/1.1 500 Bad\x1b[31m red\x1b[0m\rforged line\x07 " + b"y" * 2000 + b"\r\n"
        b"Content-Length: 0\r\n\r\n"
    )
    with listener(answer=answer) as broken:
        job = make_job(notify_on_failure=True, webhook_url=f"http://127.0.0.1:{broken.port}/")
        with django_capture_on_commit_callbacks(execute=True):
            run = finish_run(job, succeeded=False)
    attempt = NotificationAttempt.objects.get(run=run)
    assert attempt.response_code == 500
    assert attempt.error.startswith("HTTP 500 Bad red forged line yyy")
    assert len(attempt.error) <= alerts.ERROR_MAX_CHARS
    assert not any(char in attempt.error for char in "\x1b\r\n\x07")


def test_an_attempt_records_the_origin_only(
    settings, inline_alerts, django_capture_on_commit_callbacks
):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    with webhook_server() as hook:
        port = hook.url.split(":")[2].split("/")[0]
        url = f"http://user:secret@127.0.0.1:{port}/hook/T0K3N?key=abc#frag"
        job = make_job(notify_on_failure=True, webhook_url=url)
        with django_capture_on_commit_callbacks(execute=True):
            run = finish_run(job, succeeded=False)
    attempt = NotificationAttempt.objects.get(run=run)
    assert attempt.status == "sent"
    assert attempt.target == f"http://127.0.0.1:{port}"
    # user:password in the URL is sent as Basic authentication.
    assert hook.headers[0]["Authorization"] == "Basic dXNlcjpzZWNyZXQ="


def self_signed(directory, name: str) -> tuple[str, str]:
    cert, key = str(directory / f"{name}.pem"), str(directory / f"{name}.key")
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", key, "-out", cert, "-subj", f"/CN={name}"),
            *("-addext", f"subjectAltName=DNS:{name}"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


def read_request(sock: socket.socket) -> bytes:
    """The whole request, body included: closing with unread bytes would reset the
    connection and lose the answer."""
    request = b""
    while b"\r\n\r\n" not in request and (chunk := sock.recv(65536)):
        request += chunk
    head, _, body = request.partition(b"\r\n\r\n")
    lengths = [
        int(line.partition(b":")[2])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    ]
    while len(body) < sum(lengths) and (chunk := sock.recv(65536)):
        body += chunk
    return head + b"\r\n\r\n" + body


@contextmanager
def tls_listener(cert: str, key: str) -> Iterator[dict]:
    """An HTTPS server on 127.0.0.1 answering one request; records the SNI name."""
    seen: dict = {"sni": None, "request": b""}
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: seen.__setitem__("sni", name)
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(5)
    seen["port"] = server.getsockname()[1]

    def serve() -> None:
        try:
            conn, _ = server.accept()
            conn.settimeout(5)
            with context.wrap_socket(conn, server_side=True) as tls:
                seen["request"] = read_request(tls)
                tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        except (OSError, ssl.SSLError) as exc:
            seen["error"] = exc  # the client refused the certificate

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        thread.join(timeout=5)
        server.close()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_https_checks_the_certificate_and_sends_sni_for_the_url_host(
    settings, monkeypatch, tmp_path
):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["receiver.internal"]
    cert, key = self_signed(tmp_path, "receiver.internal")
    trusted = ssl.create_default_context(cafile=cert)
    with (
        resolving(monkeypatch, {"receiver.internal": "127.0.0.1"}),
        tls_listener(cert, key) as seen,
    ):
        url = f"https://receiver.internal:{seen['port']}/hook"
        ok, code, error = alerts.post_webhook(url, PAYLOAD, context=trusted)
    assert (ok, code, error) == (True, 200, ""), seen.get("error")
    assert seen["sni"] == "receiver.internal"
    assert f"Host: receiver.internal:{seen['port']}".encode() in seen["request"]

    # A certificate for another name is refused, though the address is the same.
    other_cert, other_key = self_signed(tmp_path, "other.internal")
    with (
        resolving(monkeypatch, {"receiver.internal": "127.0.0.1"}),
        tls_listener(other_cert, other_key) as seen,
    ):
        url = f"https://receiver.internal:{seen['port']}/hook"
        ok, code, error = alerts.post_webhook(
            url, PAYLOAD, context=ssl.create_default_context(cafile=other_cert)
        )
    assert (ok, code) == (False, None)
    assert "SSLCertVerificationError" in error
    assert seen["request"] == b""
