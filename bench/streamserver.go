package main

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/tdsbridge/tdsbridge/internal/loopback"
)

// childStreams is the child mode that serves the transport-only measurements.
const childStreams = "streams"

// Stream child info keys: listener addresses and the certificate (base64 DER).
const (
	infoTCP    = "tcp"
	infoTLS    = "tls"
	infoBridge = "bridge"
	infoCert   = "cert"
)

// streamPacketSize is the TDS packet size of the byte stream the TLS listeners send, so that a
// client can read it TDS-style (an 8-byte header, then the body its length gives).
const streamPacketSize = 4096

// streamChunk is how much the plain TCP listener writes per call.
const streamChunk = 64 << 10

// streamRequestSize is the request a TLS client sends after the handshake: the record size
// (u32 big-endian) the server is to write.
const streamRequestSize = 4

// streamServer writes endless streams to whoever connects, until the client goes away:
//   - tcp: plain bytes, streamChunk per Write;
//   - tls: plain TLS on the socket; bridge: TLS whose handshake runs inside PRELOGIN packets
//     through a bridge in the server role. Both read a request (the record size), then write a
//     stream of TDS packets, one TLS record of exactly that many bytes per Write, the records
//     gathered into streamChunk-byte socket writes (burstConn).
type streamServer struct {
	cert      tls.Certificate
	listeners map[string]*loopback.Server // each closes its conns and waits for its goroutines
	logf      func(format string, args ...any)
}

// startStreamServer starts the stream listeners on loopback; it takes no arguments.
func startStreamServer(args []string, stderr io.Writer) (childServer, error) {
	if len(args) != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", args)
	}
	cert, err := newSelfSigned()
	if err != nil {
		return nil, err
	}
	s := &streamServer{
		cert:      cert,
		listeners: map[string]*loopback.Server{},
		logf:      func(format string, a ...any) { fmt.Fprintf(stderr, "bench: streams: "+format+"\n", a...) },
	}
	handlers := map[string]func(net.Conn) error{
		infoTCP:    s.serveTCP,
		infoTLS:    s.serveTLS,
		infoBridge: s.serveBridge,
	}
	for name, h := range handlers {
		ln, err := loopback.Listen("")
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("listen: %w", err)
		}
		s.listeners[name] = ln
		ln.SetLogf(s.logf)
		if err := ln.Serve(func(c net.Conn, _ int) {
			if err := h(c); err != nil && !isPeerGone(err) {
				s.logf("%s: %v", c.RemoteAddr(), err)
			}
		}); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// info returns the listener addresses and the certificate.
func (s *streamServer) info() map[string]string {
	m := map[string]string{infoCert: base64.StdEncoding.EncodeToString(s.cert.Certificate[0])}
	for name, ln := range s.listeners {
		m[name] = ln.Addr()
	}
	return m
}

// Close stops the listeners, closes live connections and waits for every goroutine.
func (s *streamServer) Close() error {
	for _, ln := range s.listeners {
		_ = ln.Close()
	}
	return nil
}

// serveTCP writes streamChunk-byte chunks until the write fails.
func (s *streamServer) serveTCP(c net.Conn) error {
	buf := make([]byte, streamChunk)
	for {
		if _, err := c.Write(buf); err != nil {
			return err
		}
	}
}

// serveTLS runs plain TLS on the socket, then streams.
func (s *streamServer) serveTLS(c net.Conn) error {
	bc := &burstConn{Conn: c}
	tc := tls.Server(bc, s.tlsConfig())
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("tls handshake: %w", err)
	}
	return streamRecords(tc, bc.burst)
}

// tlsConfig is the servers' TLS configuration.
func (s *streamServer) tlsConfig() *tls.Config {
	cfg := streamTLSConfig()
	cfg.Certificates = []tls.Certificate{s.cert}
	return cfg
}

// streamRecords reads the request (the record size) from tc, calls burst, and writes an endless
// stream of TDS packets of streamPacketSize bytes, one record of exactly the record size per
// Write, until a write fails.
func streamRecords(tc *tls.Conn, burst func()) error {
	var req [streamRequestSize]byte
	if _, err := io.ReadFull(tc, req[:]); err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	rs := int(binary.BigEndian.Uint32(req[:]))
	if rs < 1 || rs > 16384 || streamChunk%rs != 0 {
		return fmt.Errorf("bad record size %d", rs)
	}
	burst()
	buf := tdsStream(streamChunk)
	for {
		for off := 0; off < len(buf); off += rs {
			if _, err := tc.Write(buf[off : off+rs]); err != nil {
				return err
			}
		}
	}
}

// tdsStream returns n bytes (a multiple of streamPacketSize) of TDS packets: tabular result,
// length streamPacketSize, packet IDs counting from 1, the body filled with a byte pattern.
func tdsStream(n int) []byte {
	buf := make([]byte, n)
	for i := 0; i < n/streamPacketSize; i++ {
		p := buf[i*streamPacketSize : (i+1)*streamPacketSize]
		p[0] = 0x04 // tabular result
		binary.BigEndian.PutUint16(p[2:4], streamPacketSize)
		p[6] = byte(i + 1)
		for j := 8; j < len(p); j++ {
			p[j] = byte(j)
		}
	}
	return buf
}

// burstConn is the senders' socket: it passes writes straight through (the handshake, whose
// flights must leave at once) until burst is called, then gathers them into streamChunk-byte
// socket writes. Records keep their exact size; only the system calls that carry them get
// fewer, so that the sender outruns the client and the client's cost is what is measured (with
// one system call per 1 KiB record, the sender, not the client, set the pace). Since the stream
// never ends, nothing is left to flush. It is used from one goroutine.
type burstConn struct {
	net.Conn
	buf []byte // nil until burst
}

// burst switches to gathered writes.
func (c *burstConn) burst() { c.buf = make([]byte, 0, streamChunk) }

// Write passes p through, or gathers it and writes the buffer once the next write would not fit.
func (c *burstConn) Write(p []byte) (int, error) {
	if c.buf == nil {
		return c.Conn.Write(p)
	}
	if len(c.buf)+len(p) > cap(c.buf) {
		if _, err := c.Conn.Write(c.buf); err != nil {
			return 0, err
		}
		c.buf = c.buf[:0]
	}
	if len(p) > cap(c.buf) {
		return c.Conn.Write(p)
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// isPeerGone reports errors that only mean the client hung up, as it does after each sample.
func isPeerGone(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || isConnReset(err)
}

// isConnReset reports a connection reset or broken pipe.
func isConnReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
