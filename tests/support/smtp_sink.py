#!/usr/bin/python3
"""A real SMTP server for tests (aiosmtpd, Debian's python3-aiosmtpd), on loopback only.

Every message it accepts is written to --out as <n>.json (n = 1, 2, ...):
  {"mail_from": "...", "rcpt_tos": ["..."], "data": "<the raw message as received>"}
written to a temporary file first and renamed, so a reader never sees half a file.

Once listening it prints exactly one line, "smtp_sink listening on <port>", and runs until
SIGTERM or SIGINT, then exits 0.

  --port 0                      a free port of the system's choosing (the default)
  --tls-cert FILE --tls-key FILE   offer STARTTLS (or, with --smtps, TLS from the first byte)
  --require-starttls            refuse every command but EHLO/NOOP/QUIT before STARTTLS
  --smtps                       implicit TLS on the port (needs the certificate and key)
  --auth USER:PASSWORD          require AUTH PLAIN or LOGIN with exactly these
  --refuse-rcpt ADDRESS         answer 550 to RCPT TO for this address (repeatable)

AUTH is offered only over TLS when TLS is configured (STARTTLS first), and over plain text
when it is not (or is implicit, --smtps).
"""

import argparse
import asyncio
import itertools
import json
import os
import signal
import socket
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


class Sink:
    def __init__(self, out_dir, refused):
        self.out_dir = out_dir
        self.refused = {a.lower() for a in refused}
        self.counter = itertools.count(1)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower() in self.refused:
            return f"550 5.1.1 <{address}>: Recipient address rejected"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        content = envelope.original_content or envelope.content or b""
        if isinstance(content, bytes):
            content = content.decode("utf-8", errors="replace")
        record = {"mail_from": envelope.mail_from, "rcpt_tos": list(envelope.rcpt_tos), "data": content}
        n = next(self.counter)
        path = os.path.join(self.out_dir, f"{n}.json")
        temporary = os.path.join(self.out_dir, f".{n}.json.tmp")
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.rename(temporary, path)
        return "250 Message accepted for delivery"


def authenticator_for(user, password):
    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword)
              and auth_data.login == user.encode() and auth_data.password == password.encode())
        # handled=False: aiosmtpd answers 535 itself when the credentials are wrong.
        return AuthResult(success=ok, handled=False)
    return authenticate


def main():
    parser = argparse.ArgumentParser(description="SMTP server for tests")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--require-starttls", action="store_true")
    parser.add_argument("--smtps", action="store_true")
    parser.add_argument("--auth")
    parser.add_argument("--refuse-rcpt", action="append", default=[])
    args = parser.parse_args()

    if args.host not in ("127.0.0.1", "::1", "localhost"):
        parser.error("--host must be a loopback address")
    if bool(args.tls_cert) != bool(args.tls_key):
        parser.error("--tls-cert and --tls-key go together")
    if (args.smtps or args.require_starttls) and not args.tls_cert:
        parser.error("--smtps and --require-starttls need --tls-cert and --tls-key")
    if args.smtps and args.require_starttls:
        parser.error("--smtps and --require-starttls exclude each other")
    if not os.path.isdir(args.out):
        parser.error(f"--out {args.out}: not a directory")

    tls_context = None
    if args.tls_cert:
        tls_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls_context.load_cert_chain(args.tls_cert, args.tls_key)

    smtp_options = {"hostname": "smtp-sink.localhost", "data_size_limit": 8 * 1024 * 1024}
    if args.auth:
        user, sep, password = args.auth.partition(":")
        if not sep or not user:
            parser.error("--auth takes USER:PASSWORD")
        smtp_options["authenticator"] = authenticator_for(user, password)
        smtp_options["auth_required"] = True
    # Where TLS is negotiated with STARTTLS, aiosmtpd's default: AUTH only after it. With no TLS
    # AUTH has to go in plain text, and with implicit TLS aiosmtpd cannot tell it is encrypted.
    if tls_context is None or args.smtps:
        smtp_options["auth_require_tls"] = False
    if tls_context is not None and not args.smtps:
        smtp_options["tls_context"] = tls_context
        smtp_options["require_starttls"] = args.require_starttls

    sink = Sink(args.out, args.refuse_rcpt)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)

    def protocol():
        return SMTP(sink, loop=loop, **smtp_options)

    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    server = loop.run_until_complete(loop.create_server(
        protocol, host=args.host, port=args.port, family=family,
        ssl=tls_context if args.smtps else None, reuse_address=True))
    port = server.sockets[0].getsockname()[1]

    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"smtp_sink listening on {port}", flush=True)
    loop.run_until_complete(stop.wait())
    server.close()
    loop.run_until_complete(server.wait_closed())
    loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
