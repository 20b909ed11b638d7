#!/usr/bin/python3
"""A small TDS server whose TLS is OpenSSL, for reliability/openssl_test.go.

TLS runs through pyOpenSSL over memory BIOs, so that this file decides how every TLS byte is
framed: inside PRELOGIN packets (TDS 7.x), raw on TCP after the handshake, or raw from the first
byte (TDS 8.0). The TDS side is written from docs/protocol.md and MS-TDS; it knows PRELOGIN,
LOGIN7, a login response and one statement, SELECT 1. README.md in this folder lists the flags
and the events printed on stdout.

Every loop is bounded in count (the MAX_* constants) and every socket read in time
(IO_TIMEOUT); the process exits when its stdin closes or after --lifetime seconds.
"""
import argparse
import ctypes
import os
import select
import socket
import struct
import sys
import threading
import time

from OpenSSL import SSL
from OpenSSL._util import ffi as openssl_ffi  # only to pass a Connection's SSL* to libssl

# TDS packet types and status bits (docs/protocol.md, "TDS packets").
PKT_BATCH, PKT_RPC, PKT_REPLY, PKT_ATTENTION = 0x01, 0x03, 0x04, 0x06
PKT_LOGIN7, PKT_PRELOGIN = 0x10, 0x12
STATUS_EOM = 0x01
HEADER = struct.Struct(">BBHHBB")  # type, status, length, SPID, packet ID, window
MAX_PACKET = 32767

# PRELOGIN ENCRYPTION values (docs/protocol.md, "ENCRYPTION values").
ENC_OFF, ENC_ON, ENC_NOT_SUP, ENC_REQ = 0x00, 0x01, 0x02, 0x03
ENC_NAMES = {ENC_OFF: "off", ENC_ON: "on", ENC_NOT_SUP: "notsup"}

# Tokens of the server's responses (MS-TDS 2.2.7).
TOK_COLMETADATA, TOK_ERROR, TOK_LOGINACK, TOK_ROW = 0x81, 0xAA, 0xAD, 0xD1
TOK_ENVCHANGE, TOK_DONE = 0xE3, 0xFD
DONE_ERROR, DONE_COUNT, DONE_ATTN = 0x02, 0x10, 0x20
TYPE_INTN = 0x26

# Bounds.
IO_TIMEOUT = 5.0  # seconds for one message to arrive, or for a blocked send
MAX_PACKETS_PER_MESSAGE = 512
MAX_HANDSHAKE_MESSAGES = 16  # TDS 7.x: client flights inside PRELOGIN
MAX_HANDSHAKE_RECORDS = 32  # TDS 8.0: client records before the handshake completes
MAX_REQUESTS = 1000
MAX_BIO_CHUNKS = 1024

# libssl functions pyOpenSSL does not bind (SSL_key_update, SSL_new_session_ticket) are called
# through ctypes on the same libssl.so.3 the cryptography bindings use.
SSL_KEY_UPDATE_REQUESTED = 1


class ProtocolError(Exception):
    """The client sent something this server does not accept."""


_print_lock = threading.Lock()


def event(*words):
    """Prints one event line on stdout (the Go test reads them); a closed stdout ends the process."""
    line = " ".join(str(w) for w in words)
    with _print_lock:
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            os._exit(0)


class LibSSL:
    """ctypes access to libssl.so.3 for what pyOpenSSL leaves out."""

    def __init__(self):
        self.lib, self.error = None, None
        try:
            lib = ctypes.CDLL("libssl.so.3")
            lib.OpenSSL_version_num.restype = ctypes.c_ulong
            from OpenSSL._util import lib as bound
            if lib.OpenSSL_version_num() != bound.OpenSSL_version_num():
                raise OSError("libssl.so.3 is not the library pyOpenSSL uses")
            for name in ("SSL_key_update", "SSL_new_session_ticket"):
                getattr(lib, name).argtypes = [ctypes.c_void_p] + ([ctypes.c_int] if name == "SSL_key_update" else [])
                getattr(lib, name).restype = ctypes.c_int
            self.lib = lib
        except (OSError, AttributeError) as e:
            self.error = str(e)

    @staticmethod
    def _ptr(conn):
        return int(openssl_ffi.cast("uintptr_t", conn._ssl))

    def key_update(self, conn):
        if self.lib is None:
            raise ProtocolError("SSL_key_update unavailable: " + self.error)
        return self.lib.SSL_key_update(self._ptr(conn), SSL_KEY_UPDATE_REQUESTED)

    def new_session_ticket(self, conn):
        if self.lib is None:
            raise ProtocolError("SSL_new_session_ticket unavailable: " + self.error)
        return self.lib.SSL_new_session_ticket(self._ptr(conn))


LIBSSL = LibSSL()


# ---- codecs over bytes -------------------------------------------------------------------------

def split(data, size):
    """data in pieces of at most size bytes (one empty piece for empty data)."""
    return [data[i:i + size] for i in range(0, len(data), size)] or [b""]


def write_buffer_flushes(records, size=4096):
    """The writes that leave a write buffer of size bytes fed records one by one and flushed at
    the end, as OpenSSL's handshake write buffer (BIO_f_buffer, 4096 bytes) passes a flight to the
    socket BIO below it: a record that does not fit tops the buffer up and flushes it whole, and
    what is left of the record goes in one write when it is size bytes or more."""
    writes, buf = [], b""
    for r in records:
        while r:
            room = size - len(buf)
            if len(r) <= room:
                buf, r = buf + r, b""
                continue
            if buf:
                writes.append(buf + r[:room])
                buf, r = b"", r[room:]
            if len(r) >= size:
                writes.append(r)
                r = b""
    if buf:
        writes.append(buf)
    return writes


def tls_records(data):
    """The TLS records of data, whole bytes each (5-byte header, then the length it gives)."""
    out, i = [], 0
    while i < len(data):  # advances by at least 5 bytes per iteration
        if len(data) - i < 5:
            raise ProtocolError("truncated TLS record header")
        n = 5 + struct.unpack_from(">H", data, i + 3)[0]
        out.append(data[i:i + n])
        i += n
    return out


def parse_prelogin(payload):
    """The client's ENCRYPTION value, or None when the option is absent (MS-TDS 2.2.6.5)."""
    for i in range(0, min(len(payload), 5 * 64), 5):
        token = payload[i]
        if token == 0xFF:
            return None
        if i + 5 > len(payload):
            break
        offset, length = struct.unpack_from(">HH", payload, i + 1)
        if token == 0x01 and length >= 1 and offset < len(payload):
            return payload[offset]
    raise ProtocolError("PRELOGIN option table without terminator")


def prelogin_reply(encryption):
    """A PRELOGIN reply payload: VERSION, ENCRYPTION, INSTOPT, THREADID (empty), MARS, terminator."""
    data = [
        (0x00, struct.pack(">IH", 0x10000000, 0)),  # VERSION 16.0.0.0, sub-build 0
        (0x01, bytes([encryption])),
        (0x02, b"\x00"),  # INSTOPT: instance matches
        (0x03, b""),  # THREADID: the server sends none
        (0x04, b"\x00"),  # MARS off
    ]
    table, body = bytearray(), bytearray()
    offset = 5 * len(data) + 1
    for token, value in data:
        table += struct.pack(">BHH", token, offset + len(body), len(value))
        body += value
    return bytes(table + b"\xff" + body)


def negotiate(setting, client):
    """(reply, outcome, close) by the negotiation table of docs/protocol.md."""
    if client is None:
        client = ENC_OFF
    client &= 0x7F  # the CLIENT_CERT bit does not change the row here
    if setting == ENC_NOT_SUP:
        return ENC_NOT_SUP, "none", client in (ENC_ON, ENC_REQ)
    if setting == ENC_ON:
        if client == ENC_NOT_SUP:
            return ENC_REQ, "none", True
        return (ENC_REQ if client == ENC_OFF else ENC_ON), "full", False
    # setting OFF
    if client == ENC_OFF:
        return ENC_OFF, "login-only", False
    if client == ENC_NOT_SUP:
        return ENC_NOT_SUP, "none", False
    return ENC_ON, "full", False


def us(s):
    """UCS-2 (UTF-16LE) bytes of s."""
    return s.encode("utf-16-le")


def b_varchar(s):
    return bytes([len(s)]) + us(s)


def us_varchar(s):
    return struct.pack("<H", len(s)) + us(s)


def parse_login7(data):
    """The fields this server uses from a LOGIN7 message (MS-TDS 2.2.6.4)."""
    if len(data) < 94:
        raise ProtocolError("LOGIN7 shorter than its fixed part (%d bytes)" % len(data))
    tds_version, packet_size = struct.unpack_from("<II", data, 4)

    def field(pos):
        offset, chars = struct.unpack_from("<HH", data, pos)
        if offset + 2 * chars > len(data):
            raise ProtocolError("LOGIN7 field at %d past the message" % pos)
        return data[offset:offset + 2 * chars]

    password = bytes(((b ^ 0xA5) << 4 & 0xF0) | ((b ^ 0xA5) >> 4) for b in field(44))
    return {
        "tds_version": tds_version,
        "packet_size": packet_size,
        "user": field(40).decode("utf-16-le"),
        "password": password.decode("utf-16-le"),
        "app": field(48).decode("utf-16-le").replace(" ", "_") or "-",
    }


def done(status, curcmd=0, rows=0):
    return struct.pack("<BHHQ", TOK_DONE, status, curcmd, rows)


def error_token(number, message):
    body = struct.pack("<iBB", number, 1, 16) + us_varchar(message) + b_varchar("openssl") + b_varchar("") + struct.pack("<i", 1)
    return struct.pack("<BH", TOK_ERROR, len(body)) + body


def login_response(tds_version, new_size):
    env = bytes([4]) + b_varchar(str(new_size)) + b_varchar("4096")  # type 4: packet size
    ack = struct.pack(">BI", 1, tds_version) + b_varchar("tds_openssl_server") + bytes([16, 0, 0, 0])
    return (struct.pack("<BH", TOK_ENVCHANGE, len(env)) + env +
            struct.pack("<BH", TOK_LOGINACK, len(ack)) + ack + done(0))


def select1_response():
    """COLMETADATA (one unnamed INT column as INTN(4)), ROW (1), DONE (count 1)."""
    meta = struct.pack("<BHIHBB", TOK_COLMETADATA, 1, 0, 0x0001, TYPE_INTN, 4) + b_varchar("")
    row = struct.pack("<BBi", TOK_ROW, 4, 1)
    return meta + row + done(DONE_COUNT, 0xC1, 1)


def batch_text(data):
    """The SQL text of a SQL batch: after ALL_HEADERS when present (TDS 7.2+)."""
    if len(data) >= 4:
        total = struct.unpack_from("<I", data, 0)[0]
        if 4 <= total <= len(data) and (len(data) - total) % 2 == 0:
            data = data[total:]
    return data.decode("utf-16-le", errors="replace")


# ---- one connection ----------------------------------------------------------------------------

class Session:
    """One client connection, served by one thread."""

    def __init__(self, sock, number, args, contexts):
        self.sock, self.n, self.args = sock, number, args
        self.ctx_prelogin, self.ctx_strict = contexts
        self.raw = bytearray()  # bytes read from the socket, not yet consumed
        self.tls = None  # SSL.Connection once a handshake started
        self.plain = bytearray()  # decrypted application data, not yet consumed
        self.tls_reads = False  # TDS packets arrive as TLS records
        self.tls_writes = False  # TDS packets leave as TLS records
        self.held = bytearray()  # TLS output held back for the next message (--tickets with-reply)
        self.hold = False
        self.packet_size = 4096
        self.packet_id = 0
        self.mode = "none"
        self.app = "-"
        self.flights = [0, 0, 0, 0]  # flights, records, packets, messages sent inside PRELOGIN
        self.max_packet = 0  # the longest of those packets, header included
        self.tickets = "-"

    # socket and TLS plumbing

    def fill_raw(self, n):
        deadline = time.monotonic() + IO_TIMEOUT
        while len(self.raw) < n:  # each pass reads at least one byte or raises
            if time.monotonic() > deadline:
                raise TimeoutError("no data within %.0fs" % IO_TIMEOUT)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("client closed the connection")
            self.raw += chunk

    def take_raw(self, n):
        self.fill_raw(n)
        out = bytes(self.raw[:n])
        del self.raw[:n]
        return out

    def read_record(self):
        header = self.take_raw(5)
        return header + self.take_raw(struct.unpack_from(">H", header, 3)[0])

    def tls_output(self):
        out = bytearray()
        for _ in range(MAX_BIO_CHUNKS):
            try:
                out += self.tls.bio_read(65536)
            except SSL.WantReadError:
                break
        return bytes(out)

    def flush_tls(self):
        out = self.tls_output()
        if self.hold:
            self.held += out
        elif out:
            self.sock.sendall(out)

    def fill_plain(self, n):
        for _ in range(64 + n // 256):  # records carry at least 256 bytes except the last
            if len(self.plain) >= n:
                return
            self.tls.bio_write(self.read_record())
            for _ in range(MAX_BIO_CHUNKS):
                try:
                    data = self.tls.recv(65536)
                except SSL.WantReadError:
                    break
                except SSL.ZeroReturnError:
                    raise EOFError("client sent close_notify")
                if not data:
                    break
                self.plain += data
            self.flush_tls()  # a KeyUpdate answer, if any
        if len(self.plain) < n:
            raise ProtocolError("too many TLS records without data")

    def read_packet(self):
        if self.tls_reads:
            self.fill_plain(8)
            length = struct.unpack_from(">H", self.plain, 2)[0]
            if length < 8:
                raise ProtocolError("TDS packet length %d" % length)
            self.fill_plain(length)
            packet = bytes(self.plain[:length])
            del self.plain[:length]
        else:
            header = self.take_raw(8)
            length = struct.unpack_from(">H", header, 2)[0]
            if length < 8:
                raise ProtocolError("TDS packet length %d" % length)
            packet = header + self.take_raw(length - 8)
        return packet[0], packet[1], packet[8:]

    def read_message(self):
        kind, data = None, bytearray()
        for _ in range(MAX_PACKETS_PER_MESSAGE):
            typ, status, body = self.read_packet()
            if kind is None:
                kind = typ
            elif typ != kind:
                raise ProtocolError("packet type %#x inside a message of type %#x" % (typ, kind))
            data += body
            if status & STATUS_EOM:
                return kind, bytes(data)
        raise ProtocolError("message of more than %d packets" % MAX_PACKETS_PER_MESSAGE)

    def frame(self, typ, chunks):
        """TDS packets of type typ for chunks, a list of (data, end of message)."""
        out = []
        for data, eom in chunks:
            self.packet_id = (self.packet_id + 1) % 256
            out.append(HEADER.pack(typ, STATUS_EOM if eom else 0, 8 + len(data), 0, self.packet_id, 0) + data)
        return out

    def send_message(self, typ, payload):
        """Sends one message in packets of the current size: one TLS record per packet when TLS
        is on, all of it (with any held TLS output in front) in one socket write."""
        pieces = split(payload, self.packet_size - 8)
        packets = self.frame(typ, [(p, i == len(pieces) - 1) for i, p in enumerate(pieces)])
        if not self.tls_writes:
            self.sock.sendall(b"".join(packets))
            return
        for p in packets:
            self.tls.sendall(p)
        wire = bytes(self.held) + self.tls_output()
        self.held.clear()
        self.hold = False
        self.sock.sendall(wire)

    def send_flight(self, data):
        """Sends a server TLS flight inside PRELOGIN packets, framed as --flight says."""
        records = tls_records(data)
        how = self.args.flight
        size = 512 if how == "512" else 4096
        if how in ("one", "512"):
            messages = [[data]]
        elif how == "record":
            messages = [records]
        elif how == "messages":
            messages = [[r] for r in records]
        else:  # "openssl-buffer": one message, of one packet of any length, per buffer write
            messages = [[w] for w in write_buffer_flushes(records)]
            size = 1 << 16
        chunks = []
        for units in messages:
            pieces = [p for u in units for p in split(u, size - 8)]
            chunks += [(p, i == len(pieces) - 1) for i, p in enumerate(pieces)]
        self.sock.sendall(b"".join(self.frame(PKT_PRELOGIN, chunks)))
        self.flights[0] += 1
        self.flights[1] += len(records)
        self.flights[2] += len(chunks)
        self.flights[3] += len(messages)
        self.max_packet = max([self.max_packet] + [8 + len(p) for p, _ in chunks])

    def after_handshake(self):
        """Sends what OpenSSL wrote once the handshake completed (TLS 1.3 session tickets): at
        once, or held for the next message with --tickets with-reply."""
        out = self.tls_output()
        records = len(tls_records(out))
        if self.args.tickets == "with-reply" and self.mode == "strict":
            self.held += out
            self.hold = True
            self.tickets = "%d/with-reply" % records
        else:
            if out:
                self.sock.sendall(out)
            self.tickets = "%d/at-once" % records

    # phases

    def handshake_in_prelogin(self):
        self.tls = SSL.Connection(self.ctx_prelogin, None)
        self.tls.set_accept_state()
        for _ in range(MAX_HANDSHAKE_MESSAGES):
            typ, data = self.read_message()
            if typ != PKT_PRELOGIN:
                raise ProtocolError("packet type %#x during the TLS handshake" % typ)
            self.tls.bio_write(data)
            try:
                self.tls.do_handshake()
                complete = True
            except SSL.WantReadError:
                complete = False
            if complete and self.tls.get_protocol_version_name() == "TLSv1.3":
                # The client sent its last flight and switched; what follows is raw records.
                self.after_handshake()
                return
            out = self.tls_output()
            if out:
                self.send_flight(out)
            if complete:
                return
        raise ProtocolError("TLS handshake not complete after %d messages" % MAX_HANDSHAKE_MESSAGES)

    def start_tds7(self):
        typ, data = self.read_message()
        if typ != PKT_PRELOGIN:
            raise ProtocolError("first message of type %#x, want PRELOGIN" % typ)
        client = parse_prelogin(data)
        reply, outcome, close = negotiate(self.args.setting, client)
        self.send_message(PKT_REPLY, prelogin_reply(reply))
        if close:
            event("refused", "conn=%d" % self.n, "client=%s" % client, "reply=%d" % reply)
            return False
        self.mode = outcome
        if outcome != "none":
            self.handshake_in_prelogin()
            self.tls_reads = self.tls_writes = outcome == "full"
        return True

    def start_strict(self):
        self.tls = SSL.Connection(self.ctx_strict, None)
        self.tls.set_accept_state()
        for _ in range(MAX_HANDSHAKE_RECORDS):
            self.tls.bio_write(self.read_record())
            try:
                self.tls.do_handshake()
                break
            except SSL.WantReadError:
                out = self.tls_output()
                if out:
                    self.sock.sendall(out)
        else:
            raise ProtocolError("TLS handshake not complete after %d records" % MAX_HANDSHAKE_RECORDS)
        self.mode = "strict"
        self.after_handshake()
        self.tls_reads = self.tls_writes = True
        typ, data = self.read_message()
        if typ != PKT_PRELOGIN:
            raise ProtocolError("first message of type %#x, want PRELOGIN" % typ)
        parse_prelogin(data)  # TDS 8.0: the value does not matter
        self.send_message(PKT_REPLY, prelogin_reply(ENC_ON))
        return True

    def read_login(self):
        if self.mode != "login-only":
            return self.read_message()
        # Login-only: the first packet of LOGIN7 as TLS records, the rest in plaintext.
        self.tls_reads = True
        typ, status, body = self.read_packet()
        self.tls_reads = False
        if self.plain:
            raise ProtocolError("login-only: %d bytes through TLS after the first LOGIN7 packet" % len(self.plain))
        data = bytearray(body)
        for _ in range(MAX_PACKETS_PER_MESSAGE):
            if status & STATUS_EOM:
                return typ, bytes(data)
            _, status, body = self.read_packet()
            data += body
        raise ProtocolError("LOGIN7 of more than %d packets" % MAX_PACKETS_PER_MESSAGE)

    def login(self):
        typ, data = self.read_login()
        if typ != PKT_LOGIN7:
            raise ProtocolError("message of type %#x, want LOGIN7" % typ)
        l = parse_login7(data)
        self.app = l["app"]
        ok = l["user"] == self.args.user and l["password"] == self.args.password
        tls = cipher = alpn = "-"
        if self.tls is not None:
            tls, cipher = self.tls.get_protocol_version_name(), self.tls.get_cipher_name()
            alpn = (self.tls.get_alpn_proto_negotiated() or b"-").decode()
        size = l["packet_size"] if 512 <= l["packet_size"] <= MAX_PACKET else 4096
        event("login", "conn=%d" % self.n, "app=%s" % self.app, "mode=%s" % self.mode, "tls=%s" % tls,
              "cipher=%s" % cipher, "alpn=%s" % alpn, "tds=%#010x" % l["tds_version"], "packetsize=%d" % size,
              "password=%s" % ("ok" if ok else "wrong"), "flights=%d/%d/%d/%d" % tuple(self.flights),
              "maxpacket=%d" % self.max_packet, "tickets=%s" % self.tickets)
        if not ok:
            self.send_message(PKT_REPLY, error_token(18456, "Login failed for user '%s'." % l["user"]) + done(DONE_ERROR))
            return False
        self.send_message(PKT_REPLY, login_response(l["tds_version"], size))
        self.packet_size = size  # from the message after the login response on
        return True

    def key_update(self):
        if LIBSSL.key_update(self.tls) != 1:
            raise ProtocolError("SSL_key_update failed (TLS %s)" % self.tls.get_protocol_version_name())
        try:
            self.tls.do_handshake()  # writes the KeyUpdate now
        except SSL.WantReadError:
            pass
        out = self.tls_output()
        self.sock.sendall(out)
        event("keyupdate", "conn=%d" % self.n, "app=%s" % self.app, "bytes=%d" % len(out))

    def idle(self):
        """Whether the client sent nothing within --idle-close milliseconds."""
        if self.raw or self.plain:
            return False
        readable, _, _ = select.select([self.sock], [], [], self.args.idle_close / 1000.0)
        return not readable

    def idle_close(self):
        """Closes an idle connection: close_notify then FIN (--close notify), or a TLS 1.3
        session ticket then FIN (--close ticket); a bare FIN when no TLS runs after login."""
        kind, out = "fin", b""
        if self.tls_writes:
            if self.args.close == "ticket":
                if LIBSSL.new_session_ticket(self.tls) != 1:
                    raise ProtocolError("SSL_new_session_ticket failed (TLS %s)" % self.tls.get_protocol_version_name())
                try:
                    self.tls.do_handshake()  # writes the ticket now
                except SSL.WantReadError:
                    pass
                kind = "ticket"
            else:
                self.tls.shutdown()  # close_notify; the client's is not awaited
                kind = "notify"
            out = self.tls_output()
            if not out:
                raise ProtocolError("OpenSSL wrote nothing for the %s close" % kind)
            self.sock.sendall(out)
        self.sock.close()
        event("closed", "conn=%d" % self.n, "app=%s" % self.app, "kind=%s" % kind,
              "records=%d" % len(tls_records(out)))

    def requests(self):
        answered = 0
        for _ in range(MAX_REQUESTS):
            if answered and self.args.idle_close and self.idle():
                self.idle_close()
                return
            typ, data = self.read_message()
            if typ == PKT_ATTENTION:
                self.send_message(PKT_REPLY, done(DONE_ATTN))
                continue
            if typ != PKT_BATCH:
                self.send_message(PKT_REPLY, error_token(50000, "request type %#x not supported" % typ) + done(DONE_ERROR))
                continue
            sql = " ".join(batch_text(data).split()).rstrip(";").upper()
            if self.args.key_update and answered:
                self.key_update()
            if sql == "SELECT 1":
                self.send_message(PKT_REPLY, select1_response())
            else:
                self.send_message(PKT_REPLY, error_token(50000, "only SELECT 1 is supported") + done(DONE_ERROR))
            answered += 1
            event("batch", "conn=%d" % self.n, "app=%s" % self.app, "n=%d" % answered)

    def serve(self):
        self.sock.settimeout(IO_TIMEOUT)
        self.fill_raw(1)
        strict = self.raw[0] == 0x16  # a TLS handshake record: TDS 8.0
        if (self.start_strict() if strict else self.start_tds7()) and self.login():
            self.requests()


def serve_connection(sock, number, args, contexts):
    s = Session(sock, number, args, contexts)
    try:
        s.serve()
    except EOFError as e:
        event("end", "conn=%d" % number, "app=%s" % s.app, "reason=%s" % str(e).replace(" ", "_"))
    except Exception as e:  # reported to the test, which logs it
        event("error", "conn=%d" % number, "app=%s" % s.app, "%s:" % type(e).__name__, e)
    finally:
        try:
            sock.close()
        except OSError:
            pass


def make_context(args, strict):
    ctx = SSL.Context(SSL.TLS_METHOD)
    ctx.use_certificate_chain_file(args.cert)
    ctx.use_privatekey_file(args.key)
    ctx.check_privatekey()
    ctx.set_min_proto_version(SSL.TLS1_2_VERSION)
    top = SSL.TLS1_3_VERSION if strict or args.prelogin_tls == "1.3" else SSL.TLS1_2_VERSION
    ctx.set_max_proto_version(top)
    if strict:
        def select_tds8(conn, offered):
            return b"tds/8.0" if b"tds/8.0" in offered else SSL.NO_OVERLAPPING_PROTOCOLS
        ctx.set_alpn_select_callback(select_tds8)
    return ctx


def main():
    p = argparse.ArgumentParser(description="A TDS server whose TLS is OpenSSL (see README.md).")
    p.add_argument("--cert", required=True, help="PEM certificate (chain) file")
    p.add_argument("--key", required=True, help="PEM private key file")
    p.add_argument("--encryption", choices=["off", "on", "notsup"], default="off",
                   help="the server's ENCRYPTION setting for TDS 7.x")
    p.add_argument("--flight", choices=["one", "512", "record", "messages", "openssl-buffer"],
                   default="one", help="TDS 7.x: how a server flight is framed in PRELOGIN packets")
    p.add_argument("--prelogin-tls", choices=["1.2", "1.3"], default="1.2",
                   help="highest TLS version inside PRELOGIN (TDS 8.0 allows 1.3 always)")
    p.add_argument("--tickets", choices=["at-once", "with-reply"], default="at-once",
                   help="TDS 8.0: send TLS 1.3 session tickets at once or with the PRELOGIN reply")
    p.add_argument("--key-update", action="store_true",
                   help="TLS 1.3: send a KeyUpdate before the answer of every batch after the first")
    p.add_argument("--idle-close", type=int, default=0, metavar="MS",
                   help="close a connection idle this long after answering a batch (0: never)")
    p.add_argument("--close", choices=["notify", "ticket"], default="notify",
                   help="the idle close: close_notify then FIN, or a TLS 1.3 session ticket then FIN")
    p.add_argument("--user", default="sa")
    p.add_argument("--password", default="pw")
    p.add_argument("--lifetime", type=float, default=120.0, help="seconds before the process exits")
    p.add_argument("--max-conns", type=int, default=256)
    args = p.parse_args()
    args.setting = {"off": ENC_OFF, "on": ENC_ON, "notsup": ENC_NOT_SUP}[args.encryption]
    contexts = (make_context(args, False), make_context(args, True))

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.2)
    event("port", listener.getsockname()[1])

    def watch_stdin():
        # Ends with stdin's EOF; the process ends then, or at --lifetime, whichever comes first.
        while sys.stdin.buffer.read1(4096):
            pass
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    deadline = time.monotonic() + args.lifetime
    accepted = 0
    while time.monotonic() < deadline:  # one pass per accept or per 0.2 s
        if accepted >= args.max_conns:
            time.sleep(0.2)
            continue
        try:
            sock, _ = listener.accept()
        except socket.timeout:
            continue
        accepted += 1
        threading.Thread(target=serve_connection, args=(sock, accepted, args, contexts), daemon=True).start()
    os._exit(0)


if __name__ == "__main__":
    main()
