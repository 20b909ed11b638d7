package reliability

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/wiretest"
)

// sizedRecord returns the plaintext of record i of size n: bytes that differ per record.
func sizedRecord(i, n int) []byte {
	b := pattern(fmt.Sprintf("<record %d>", i), n)
	b[0] = byte(i)
	return b
}

// recordServer is a bridge server (TLS 1.2 at most unless tls13) that writes count records of
// size bytes each and then closes with close_notify. suite, if not 0, is the only TLS 1.2
// cipher suite it accepts.
func recordServer(t *testing.T, tls13 bool, suite uint16, count, size int) *wiretest.ScriptServer {
	t.Helper()
	cert, _ := serverCert(t)
	cfg := bridge.TLSConfig(&tls.Config{
		Certificates:           []tls.Certificate{cert},
		MinVersion:             tls.VersionTLS12,
		SessionTicketsDisabled: true, // no TLS 1.3 ticket records among the data
	}, tls13)
	if suite != 0 {
		cfg.CipherSuites = []uint16{suite}
	}
	s, err := wiretest.NewScriptServer(func(c net.Conn) {
		b := bridge.New(c, bridge.Options{Role: bridge.RoleServer})
		defer b.Close()
		tc := tls.Server(b, cfg)
		_ = tc.SetDeadline(time.Now().Add(hangBound))
		if err := tc.Handshake(); err != nil || b.StartPassthrough() != nil {
			return
		}
		for i := range count {
			if _, err := tc.Write(sizedRecord(i, size)); err != nil {
				return
			}
		}
		_ = tc.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// dialRecords connects a bridge client (coalescing Reader) through p, with TLS 1.3 allowed
// when tls13 is set and, if suite is not 0, that TLS 1.2 cipher suite enabled (some suites,
// like CBC with SHA-256, are off by default).
func dialRecords(t *testing.T, addr string, tls13 bool, suite uint16) *bridgeClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cc := wiretest.NewCountingConn(raw)
	b := bridge.New(cc, bridge.Options{})
	cfg := clientTLS(t)
	if suite != 0 {
		cfg.CipherSuites = []uint16{suite}
	}
	tc := tls.Client(b, bridge.TLSConfig(cfg, tls13))
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = b.Close()
		t.Fatalf("handshake: %v", err)
	}
	if err := b.StartPassthrough(); err != nil {
		_ = b.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	_ = b.SetDeadline(time.Now().Add(hangBound))
	return &bridgeClient{raw: cc, b: b, tc: tc, r: bridge.NewReader(tc, b, 64<<10)}
}

// recordSuites are the TLS versions and cipher suites the record tests run with: each empty-
// record threshold of bridge.Reader (TLS 1.3, AES-GCM, ChaCha20-Poly1305, any other suite).
var recordSuites = []struct {
	name  string
	tls13 bool
	suite uint16
}{
	{"tls13", true, 0},
	{"aes-gcm", false, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
	{"chacha20", false, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256},
	{"cbc-sha", false, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA},
	{"cbc-sha256", false, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256},
}

// TestCorruptionDeliversPrefix: whatever the TLS version and cipher suite, the record size and
// the position of the corrupted record, the coalescing Reader delivers exactly the plaintext
// of every record before it, then a bad record MAC error, every time after that too.
func TestCorruptionDeliversPrefix(t *testing.T) {
	t.Parallel()
	const count = 24
	for _, rs := range recordSuites {
		for _, size := range []int{1, 100, 4000, 16384} {
			for _, pos := range []int{0, 1, count / 2, count - 1} {
				name := fmt.Sprintf("%s/size=%d/pos=%d", rs.name, size, pos)
				tls13 := rs.tls13
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					s := recordServer(t, tls13, rs.suite, count, size)
					seen := 0
					p := proxy(t, s.Addr, func(dir wiretest.Direction, u *wiretest.Unit) wiretest.Verdict {
						if dir == wiretest.ServerToClient && u.Kind == wiretest.UnitTLS {
							if seen == pos {
								u.Bytes[len(u.Bytes)-1] ^= 1
							}
							seen++
						}
						return wiretest.Verdict{Send: u.Bytes}
					})
					c := dialRecords(t, p.Addr, tls13, rs.suite)
					cs := c.tc.ConnectionState()
					if (cs.Version == tls.VersionTLS13) != tls13 || (rs.suite != 0 && cs.CipherSuite != rs.suite) {
						t.Fatalf("negotiated %s %s", tls.VersionName(cs.Version), tls.CipherSuiteName(cs.CipherSuite))
					}
					data, err, again := readAll(c.r)
					checkErr(t, err, nil, "bad record MAC")
					var want []byte
					for i := range pos {
						want = append(want, sizedRecord(i, size)...)
					}
					if !bytes.Equal(data, want) {
						t.Errorf("got %d bytes, want exactly the %d bytes of the %d records before the corrupted one (first difference at %d)",
							len(data), len(want), pos, firstDiff(data, want))
					}
					if again == nil {
						t.Error("Read after the bad record succeeded")
					}
				})
			}
		}
	}
}

// TestTimeoutMidRecordResumes: a read deadline that expires while half a record has arrived
// ends the Read with a timeout; with a new deadline, once the rest arrives, every byte is
// delivered in order (the timeout lost nothing and was not sticky).
func TestTimeoutMidRecordResumes(t *testing.T) {
	t.Parallel()
	for _, rs := range recordSuites {
		t.Run(rs.name, func(t *testing.T) {
			t.Parallel()
			timeoutMidRecord(t, rs.tls13, rs.suite)
		})
	}
}

func timeoutMidRecord(t *testing.T, tls13 bool, suite uint16) {
	const count, size, pos = 40, 1000, 20
	s := recordServer(t, tls13, suite, count, size)
	release := make(chan struct{})
	var stash []byte
	seen := 0
	p := proxy(t, s.Addr, func(dir wiretest.Direction, u *wiretest.Unit) wiretest.Verdict {
		if dir != wiretest.ServerToClient || u.Kind != wiretest.UnitTLS {
			return wiretest.Verdict{Send: u.Bytes}
		}
		seen++
		switch {
		case seen == pos+1: // half of record pos now, the rest later
			stash = u.Bytes[len(u.Bytes)/2:]
			return wiretest.Verdict{Send: u.Bytes[:len(u.Bytes)/2]}
		case stash != nil:
			<-release
			out := append(stash, u.Bytes...)
			stash = nil
			return wiretest.Verdict{Send: out}
		}
		return wiretest.Verdict{Send: u.Bytes}
	})
	c := dialRecords(t, p.Addr, tls13, suite)
	_ = c.b.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	first, err := readUntilErr(c.r)
	if !isTimeout(err) {
		close(release)
		t.Fatalf("first phase ended with %v, want a timeout", err)
	}
	_ = c.b.SetReadDeadline(time.Now().Add(hangBound))
	close(release)
	rest, err := readUntilErr(c.r)
	if err != io.EOF {
		t.Errorf("second phase ended with %v, want io.EOF (close_notify)", err)
	}
	var want []byte
	for i := range count {
		want = append(want, sizedRecord(i, size)...)
	}
	got := append(first, rest...)
	t.Logf("%d bytes before the timeout, %d after", len(first), len(rest))
	if len(first) != pos*size {
		t.Errorf("%d bytes before the timeout, want %d", len(first), pos*size)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("got %d bytes, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
}

// readUntilErr reads r until an error, like readAll, without the extra Read.
func readUntilErr(r io.Reader) ([]byte, error) {
	var data []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		data = append(data, buf[:n]...)
		if err != nil {
			return data, err
		}
	}
}
