package bridge

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/testcert"
)

// testPKI is a CA with a server and a client leaf certificate.
type testPKI struct {
	pool   *x509.CertPool
	server tls.Certificate
	client tls.Certificate
}

var (
	pkiOnce            sync.Once
	smallPKI, largePKI testPKI
	pkiErr             error
)

// pkis returns a PKI with small ECDSA certificates and one whose server
// and client chains are each over 4096 bytes (a leaf with hundreds of
// DNS names), generated once per test binary.
func pkis(t testing.TB) (small, large testPKI) {
	t.Helper()
	pkiOnce.Do(func() {
		smallPKI, pkiErr = newPKI(1)
		if pkiErr == nil {
			largePKI, pkiErr = newPKI(300)
		}
	})
	if pkiErr != nil {
		t.Fatal(pkiErr)
	}
	return smallPKI, largePKI
}

// newPKI makes a CA and a server and a client leaf under it, each naming
// localhost and 127.0.0.1 plus names-1 extra DNS names, and each sending the
// CA after the leaf.
func newPKI(names int) (testPKI, error) {
	ca, err := testcert.NewCA("bridge test CA")
	if err != nil {
		return testPKI{}, err
	}
	leaf := testcert.LeafOptions{DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtraNames: names - 1, IncludeRoot: true}
	server, err := ca.Issue(leaf)
	if err != nil {
		return testPKI{}, err
	}
	leaf.CommonName, leaf.Client = "client", true
	client, err := ca.Issue(leaf)
	if err != nil {
		return testPKI{}, err
	}
	return testPKI{pool: ca.Pool(), server: server, client: client}, nil
}

func chainLen(c tls.Certificate) int {
	n := 0
	for _, der := range c.Certificate {
		n += len(der)
	}
	return n
}

// transport names a way of making a connected pair of sockets.
type transport struct {
	name string
	pair func(t testing.TB) (client, server net.Conn)
}

var transports = []transport{
	{"pipe", func(t testing.TB) (net.Conn, net.Conn) { c, s := net.Pipe(); return c, s }},
	{"tcp", tcpPair},
}

// memTransport buffers without limit (see memPipe).
var memTransport = transport{"mem", func(t testing.TB) (net.Conn, net.Conn) { c, s := memPipe(); return c, s }}

// tcpPair returns the two ends of a loopback TCP connection; both are
// closed when the test ends.
func tcpPair(t testing.TB) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept()
		ch <- res{c, err}
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		client.Close()
		t.Fatal(r.err)
	}
	t.Cleanup(func() { client.Close(); r.c.Close() })
	return client, r.c
}

// countConn counts the bytes read from and written to a net.Conn and the
// Write calls, and can record what was written.
type countConn struct {
	net.Conn
	read, written, writes atomic.Int64

	mu     sync.Mutex
	record bool
	log    bytes.Buffer // everything written, when record is set
	// lastWrite is the slice passed to the last Write.
	lastWrite []byte
	// corrupt, when above 0, is the number of the Write (counting from 1)
	// whose last byte is flipped on the way to the socket.
	corrupt atomic.Int64
}

func (c *countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func (c *countConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.lastWrite = p
	if c.record {
		c.log.Write(p)
	}
	c.mu.Unlock()
	if c.writes.Add(1) == c.corrupt.Load() {
		p = bytes.Clone(p)
		p[len(p)-1] ^= 0xff
	}
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

func (c *countConn) logged() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.log.Bytes())
}

// tlsPair is a client and a server, each a tls.Conn over a bridge.
type tlsPair struct {
	cb, sb     *Conn
	ctc, stc   *tls.Conn
	craw, sraw *countConn
}

// pairConfig configures newTLSPair.
type pairConfig struct {
	tr        transport
	pki       testPKI
	tls13     bool              // allow TLS 1.3 (TLSConfig)
	clientCfg func(*tls.Config) // extra client settings
	serverCfg func(*tls.Config) // extra server settings
	direct    bool              // TDS 8.0: both sides Direct
}

func (pc pairConfig) configs() (client, server *tls.Config) {
	client = TLSConfig(&tls.Config{RootCAs: pc.pki.pool, ServerName: "localhost"}, pc.tls13)
	server = TLSConfig(&tls.Config{Certificates: []tls.Certificate{pc.pki.server}}, pc.tls13)
	if pc.clientCfg != nil {
		pc.clientCfg(client)
	}
	if pc.serverCfg != nil {
		pc.serverCfg(server)
	}
	return client, server
}

// newTLSPair connects a client and a server bridge, runs the TLS handshake
// over them and switches both to passthrough. Everything is closed when
// the test ends.
func newTLSPair(t testing.TB, pc pairConfig) *tlsPair {
	t.Helper()
	p, err := dialTLSPair(t, pc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func dialTLSPair(t testing.TB, pc pairConfig) (*tlsPair, error) {
	t.Helper()
	c, s := pc.tr.pair(t)
	p := &tlsPair{craw: &countConn{Conn: c, record: true}, sraw: &countConn{Conn: s, record: true}}
	p.cb = New(p.craw, Options{Role: RoleClient, Direct: pc.direct})
	p.sb = New(p.sraw, Options{Role: RoleServer, Direct: pc.direct})
	t.Cleanup(func() { p.cb.Close(); p.sb.Close() })
	ccfg, scfg := pc.configs()
	p.ctc = tls.Client(p.cb, ccfg)
	p.stc = tls.Server(p.sb, scfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		err := p.stc.HandshakeContext(ctx)
		if err == nil && !pc.direct {
			err = p.sb.StartPassthrough()
		}
		if err != nil {
			p.sb.Close()
		}
		errc <- err
	}()
	cerr := p.ctc.HandshakeContext(ctx)
	if cerr != nil {
		_ = p.cb.SendPending() // the alert, as mssqlbridge sends it
	}
	if cerr == nil && !pc.direct {
		cerr = p.cb.StartPassthrough()
	}
	if cerr != nil {
		p.cb.Close()
	}
	serr := <-errc
	if cerr != nil || serr != nil {
		return nil, fmt.Errorf("handshake: client: %v; server: %v", cerr, serr)
	}
	return p, nil
}

// roundTrip sends msg from w and reads it whole from r.
func roundTrip(t testing.TB, w io.Writer, r io.Reader, msg []byte) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := w.Write(msg)
		errc <- err
	}()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatalf("read: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("write: %v", err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("read %q, want %q", trunc(got), trunc(msg))
	}
}

func trunc(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// pattern returns n bytes of a recognisable pattern that starts at seed.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed + i*7 + i/251)
	}
	return b
}

// handshakeBoth runs the TLS handshakes of tc and ts, which talk to each other, concurrently and
// fails the test if either fails.
func handshakeBoth(t testing.TB, tc, ts *tls.Conn) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- ts.Handshake() }()
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
