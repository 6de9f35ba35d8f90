#!/usr/bin/env python3
"""Loopback peers for t-notify.sh: a small SMTP sink and an HTTP listener.

  notify-peers.py smtp DIR [--user U --password P]
  notify-peers.py http DIR [--status CODE]

(--port P: listen on P instead of a free port, e.g. to come back after a stop.)

Each listens on 127.0.0.1 at a free port, writes the port to DIR/port
once it accepts connections, and keeps what it receives:

  smtp: DIR/msg-N.raw   the DATA bytes as sent (CRLF, dot-stuffed)
        DIR/msg-N.eml   the message after SMTP's dot-unstuffing
        DIR/msg-N.env   "from <addr>", "rcpt <addr>" and "auth <user>" lines
  http: DIR/post-N.json the body of each POST
        DIR/post-N.hdr  its request line and headers

The SMTP sink speaks just enough ESMTP for libcurl (EHLO, AUTH PLAIN,
MAIL, RCPT, DATA, RSET, NOOP, QUIT), written here rather than with the
smtpd module, which Python 3.12 removed.
"""
import base64
import http.server
import os
import socketserver
import sys
import threading


def counter(directory, prefix):
    n = 1
    while os.path.exists(os.path.join(directory, "%s-%d.%s" % (prefix[0], n, prefix[1]))):
        n += 1
    return n


class SMTPHandler(socketserver.StreamRequestHandler):
    lock = threading.Lock()

    def reply(self, line):
        self.wfile.write(line.encode() + b"\r\n")
        self.wfile.flush()

    def handle(self):
        srv = self.server
        env, authed = [], srv.user is None
        self.reply("220 klab-test-sink ESMTP")
        while True:
            line = self.rfile.readline(4096)
            if not line:
                return
            cmd = line.rstrip(b"\r\n").decode("utf-8", "replace")
            verb = cmd.split(" ", 1)[0].upper()
            if verb == "EHLO":
                self.wfile.write(b"250-klab-test-sink\r\n")
                if srv.user is not None:
                    self.wfile.write(b"250-AUTH PLAIN\r\n")
                self.reply("250 8BITMIME")
            elif verb == "HELO":
                self.reply("250 klab-test-sink")
            elif verb == "AUTH":
                parts = cmd.split()
                if len(parts) < 2 or parts[1].upper() != "PLAIN":
                    self.reply("504 only PLAIN")
                    continue
                if len(parts) == 2:
                    self.reply("334 ")
                    token = self.rfile.readline(4096).strip()
                else:
                    token = parts[2].encode()
                try:
                    _, user, pw = base64.b64decode(token).split(b"\0")
                except Exception:
                    self.reply("501 bad AUTH PLAIN")
                    continue
                if user.decode() == srv.user and pw.decode() == srv.password:
                    authed = True
                    env.append("auth " + user.decode())
                    self.reply("235 authenticated")
                else:
                    self.reply("535 authentication failed")
            elif verb == "MAIL":
                if not authed:
                    self.reply("530 authentication required")
                    continue
                env = [e for e in env if e.startswith("auth ")]
                env.append("from " + cmd[10:].strip())
                self.reply("250 ok")
            elif verb == "RCPT":
                env.append("rcpt " + cmd[8:].strip())
                self.reply("250 ok")
            elif verb == "DATA":
                self.reply("354 end with <CRLF>.<CRLF>")
                raw = b""
                while True:
                    l = self.rfile.readline(65536)
                    if not l:
                        return
                    if l == b".\r\n":
                        break
                    raw += l
                body = b"".join(l[1:] if l.startswith(b".") else l for l in raw.splitlines(True))
                with SMTPHandler.lock:
                    n = counter(srv.dir, ("msg", "eml"))
                    base = os.path.join(srv.dir, "msg-%d" % n)
                    with open(base + ".raw", "wb") as f:
                        f.write(raw)
                    with open(base + ".env", "w") as f:
                        f.write("\n".join(env) + "\n")
                    with open(base + ".eml", "wb") as f:
                        f.write(body)
                self.reply("250 queued as %d" % n)
            elif verb in ("RSET", "NOOP"):
                self.reply("250 ok")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("502 not implemented")


class HTTPHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        srv = self.server
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        n = counter(srv.dir, ("post", "json"))
        base = os.path.join(srv.dir, "post-%d" % n)
        with open(base + ".hdr", "w") as f:
            f.write(self.requestline + "\n" + str(self.headers))
        with open(base + ".json", "wb") as f:
            f.write(body)
        self.send_response(srv.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    kind, directory = sys.argv[1], sys.argv[2]
    opts = dict(zip(sys.argv[3::2], sys.argv[4::2]))
    os.makedirs(directory, exist_ok=True)
    handler = SMTPHandler if kind == "smtp" else HTTPHandler
    srv = Server(("127.0.0.1", int(opts.get("--port", "0"))), handler)
    srv.dir = directory
    srv.user = opts.get("--user")
    srv.password = opts.get("--password")
    srv.status = int(opts.get("--status", "204"))
    tmp = os.path.join(directory, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(directory, "port"))
    srv.serve_forever()


if __name__ == "__main__":
    main()
