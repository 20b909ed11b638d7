package reliability

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/wiretest"
	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// Fuzz input layout for FuzzClientHandshake: byte 0 selects the client (clientModes), then a
// sequence of chunks, each a 2-byte big-endian length and that many bytes (the last one cut
// short if the input ends). The fake server reads the client's first bytes (its PRELOGIN, or
// the ClientHello of a strict connection or of a bare bridge), answers with chunk 0, and then,
// each time the client writes again or stays quiet for a moment, with the next chunk; after
// the last chunk it closes the connection.
var clientModes = [...]string{
	"bridge",             // bridge.Conn under tls.Client, handshake inside PRELOGIN packets
	"connector-true",     // the bridged go-mssqldb connector's conn, encrypt=true
	"connector-false",    // encrypt=false: login-only or full, as the reply says
	"connector-disable",  // encrypt=disable: plaintext unless the server requires TLS
	"connector-strict",   // encrypt=strict: TLS directly on TCP (bridge Direct mode)
	"bridge-tabular-hs",  // as "bridge", for seeds whose handshake packets are type 0x04
	"connector-true-big", // as connector-true, with a large read after login
}

// fuzzBudget bounds one execution: the client's deadline, and (with slack) the hang check.
const fuzzBudget = time.Second

// encodeFuzzInput is the inverse of splitChunks, for seeds.
func encodeFuzzInput(mode byte, chunks ...[]byte) []byte {
	out := []byte{mode}
	for _, c := range chunks {
		out = binary.BigEndian.AppendUint16(out, uint16(len(c)))
		out = append(out, c...)
	}
	return out
}

// splitChunks decodes the chunks of a fuzz input (after the mode byte).
func splitChunks(b []byte) [][]byte {
	var chunks [][]byte
	for len(b) > 0 {
		if len(b) < 2 {
			chunks = append(chunks, b)
			break
		}
		n := int(binary.BigEndian.Uint16(b))
		b = b[2:]
		n = min(n, len(b))
		chunks = append(chunks, b[:n])
		b = b[n:]
	}
	return chunks
}

// fuzzServer is the fake server of FuzzClientHandshake: one connection per execution, fed
// through next; done receives, once the connection's script has returned, every byte the
// client sent.
type fuzzServer struct {
	*wiretest.ScriptServer
	next chan [][]byte
	done chan []byte
}

func newFuzzServer(t testing.TB) *fuzzServer {
	fs := &fuzzServer{next: make(chan [][]byte, 1), done: make(chan []byte, 1)}
	fs.ScriptServer = scriptServer(t, func(c net.Conn) {
		var got []byte
		defer func() { fs.done <- got }()
		var chunks [][]byte
		select {
		case chunks = <-fs.next:
		case <-time.After(fuzzBudget):
			return // a connection no execution is waiting for
		}
		_ = c.SetDeadline(time.Now().Add(fuzzBudget))
		buf := make([]byte, 32<<10)
		// read waits up to idle for the client's next bytes and records them; it reports
		// false when the client has gone.
		read := func(idle time.Duration) bool {
			if idle > 0 {
				_ = c.SetReadDeadline(time.Now().Add(idle))
			}
			n, err := c.Read(buf)
			if len(got) < 1<<20 {
				got = append(got, buf[:n]...)
			}
			return err == nil || isTimeout(err)
		}
		if !read(0) {
			return
		}
		for _, ch := range chunks {
			if _, err := c.Write(ch); err != nil {
				return
			}
			// Wait briefly for the client's next flight; go on when it comes or when the
			// client stays quiet (it wants more bytes).
			if !read(2 * time.Millisecond) {
				return
			}
		}
		// Collect what the client still sends (its LOGIN7, if it got that far) until it has
		// been quiet for 5 ms, then close.
		for len(got) < 1<<20 {
			n := len(got)
			if !read(5*time.Millisecond) || len(got) == n {
				return
			}
		}
	})
	return fs
}

// loginMarker is the payload of the LOGIN7 packet the connector client sends: with
// encrypt=true or strict it must never reach the server in clear, whatever the server said.
var loginMarker = bytes.Repeat([]byte("L7-SECRET-"), 10)

// fuzzConnectors builds the connectors of the connector modes once per fuzz process.
func fuzzConnectors(t testing.TB, addr string) map[string]*mssql.Connector {
	out := map[string]*mssql.Connector{}
	for _, enc := range []string{"true", "false", "disable", "strict"} {
		c, err := mssqlbridge.NewConnector("sqlserver://sa:pw@" + addr + "?encrypt=" + enc + "&TrustServerCertificate=true")
		if err != nil {
			t.Fatal(err)
		}
		out[enc] = c
	}
	return out
}

// runConnectorClient drives the connector's conn as go-mssqldb would: PRELOGIN, then (if the
// negotiation succeeds) the PRELOGIN reply, a LOGIN7 packet and reads until an error.
func runConnectorClient(ctx context.Context, c *mssql.Connector, addr string, readMax int) error {
	conn, err := c.Dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(fuzzBudget))
	if _, err := conn.Write(driverPrelogin()); err != nil {
		return err
	}
	rd := tds.NewReader(conn, tds.ReaderConfig{})
	if _, _, err := rd.ReadMessage(); err != nil {
		return err
	}
	login := wiretest.Packet(tds.TypeLogin7, tds.StatusEOM, loginMarker, 0)
	if _, err := conn.Write(login); err != nil {
		return err
	}
	_, err = io.CopyN(io.Discard, conn, int64(readMax))
	return err
}

// runBridgeClient runs tls.Client over a client bridge, then reads through bridge.Reader.
func runBridgeClient(ctx context.Context, addr string, cfg *tls.Config) error {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	b := bridge.New(raw, bridge.Options{Role: bridge.RoleClient})
	defer b.Close()
	_ = b.SetDeadline(time.Now().Add(fuzzBudget))
	tc := tls.Client(b, bridge.TLSConfig(cfg, false))
	if err := tc.HandshakeContext(ctx); err != nil {
		return err
	}
	if err := b.StartPassthrough(); err != nil {
		return err
	}
	_, err = io.CopyN(io.Discard, bridge.NewReader(tc, b, 0), 1<<20)
	return err
}

// FuzzClientHandshake runs the client side of the connection (the bridged connector's conn, or
// a bare bridge under tls.Client) against a server that answers with fuzzer-chosen bytes. It
// checks that the client never panics, always returns within its deadline (plus slack), never
// allocates more than a bound per execution, and, with encrypt=true or strict, never lets its
// LOGIN7 reach the server in clear, whatever the server says.
//
// Executions talk over loopback with short waits, so coverage varies a little from run to run
// and the fuzzer finds many "new" inputs; its default minimization (up to 60 s each) then
// starves the run. Run it with a bounded minimization:
//
//	go test -run '^$' -fuzz '^FuzzClientHandshake$' -fuzztime 3m -fuzzminimizetime 5x ./reliability/
func FuzzClientHandshake(f *testing.F) {
	// The seeds are the files under testdata/fuzz/FuzzClientHandshake (see TestWriteFuzzCorpus).
	fs := newFuzzServer(f)
	connectors := fuzzConnectors(f, fs.Addr)
	// No certificate check in bridge mode, so that recorded flights get past it to the
	// handshake's signature and beyond.
	cfg := &tls.Config{InsecureSkipVerify: true}
	var mu sync.Mutex // one execution at a time per process (the server has one input slot)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		mode := clientModes[int(in[0])%len(clientModes)]
		fs.next <- splitChunks(in[1:])

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ctx, cancel := context.WithTimeout(context.Background(), fuzzBudget)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			switch mode {
			case "bridge", "bridge-tabular-hs":
				done <- runBridgeClient(ctx, fs.Addr, cfg)
			case "connector-true-big":
				done <- runConnectorClient(ctx, connectors["true"], fs.Addr, 8<<20)
			default:
				done <- runConnectorClient(ctx, connectors[mode[len("connector-"):]], fs.Addr, 1<<20)
			}
		}()
		select {
		case err := <-done:
			t.Logf("%s client: %v", mode, err)
		case <-time.After(5 * fuzzBudget):
			t.Fatalf("%s client still running after %v", mode, 5*fuzzBudget)
		}
		// The server's script must end too (it closes after its last chunk or on the
		// client's close); drain an input it never took.
		var sent []byte
		select {
		case sent = <-fs.done:
		case <-time.After(5 * fuzzBudget):
			t.Fatalf("fake server still running after %v", 5*fuzzBudget)
		}
		if (mode == "connector-true" || mode == "connector-true-big" || mode == "connector-strict") && bytes.Contains(sent, loginMarker) {
			t.Fatalf("%s: the LOGIN7 packet reached the server in clear", mode)
		}
		select {
		case <-fs.next:
		default:
		}
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Fatalf("%s client allocated %s in one execution (bound 64 MiB)", mode, describe(int64(alloc)))
		}
	})
}

// TestFuzzOracle checks the fuzz target's leak oracle against a client that legitimately sends
// LOGIN7 in clear (encrypt=false, server reply NOT_SUP): the fake server must see the marker.
// Without this, a broken recorder would make the oracle pass vacuously.
func TestFuzzOracle(t *testing.T) {
	t.Parallel()
	fs := newFuzzServer(t)
	connectors := fuzzConnectors(t, fs.Addr)
	fs.next <- [][]byte{wiretest.PreloginReply(prelogin.EncryptNotSup)}
	ctx, cancel := context.WithTimeout(context.Background(), fuzzBudget)
	defer cancel()
	err := runConnectorClient(ctx, connectors["false"], fs.Addr, 1<<20)
	t.Logf("client: %v", err)
	var sent []byte
	_ = within(t, "fake server", func() error { sent = <-fs.done; return nil })
	if !bytes.Contains(sent, loginMarker) {
		t.Fatalf("the fake server did not record the LOGIN7 sent in clear (%d bytes recorded)", len(sent))
	}
}

// TestWriteFuzzCorpus writes the seed corpus of FuzzClientHandshake to
// testdata/fuzz/FuzzClientHandshake when RELIABILITY_WRITE_CORPUS=1. The committed files are its
// output; the seeds include a real server's handshake flight, recorded from tdstest.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("RELIABILITY_WRITE_CORPUS") != "1" {
		t.Skip("set RELIABILITY_WRITE_CORPUS=1 to rewrite the seed corpus")
	}
	dir := "testdata/fuzz/FuzzClientHandshake"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, seed := range corpusSeeds(t) {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", seed)
		if err := os.WriteFile(dir+"/"+name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Client modes by index, for seeds.
const (
	modeBridge byte = iota
	modeTrue
	modeFalse
	modeDisable
	modeStrict
	modeBridgeTabular
	modeTrueBig
)

// corpusSeeds returns the seed inputs of FuzzClientHandshake by file name: hand-made replies
// that reach each state of the negotiation and of the handshake framing, and real servers'
// answers recorded through a Proxy.
func corpusSeeds(t *testing.T) map[string][]byte {
	seeds := map[string][]byte{}
	prePkt := func(payload []byte) []byte { return wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, payload, 0) }
	truncatedServerHello := []byte{0x16, 0x03, 0x03, 0x00, 0x50, 0x02, 0x00, 0x00, 0x4c, 0x03, 0x03, 0x01, 0x02}
	alert := []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28}
	modes := map[byte]string{modeTrue: "true", modeFalse: "false", modeDisable: "disable"}
	for m, name := range modes {
		for _, e := range []byte{0x00, 0x01, 0x02, 0x03, 0x04, 0x20, 0x80, 0x81, 0xFF} {
			reply := wiretest.PreloginReply(prelogin.Encryption(e))
			seeds[fmt.Sprintf("reply-%s-enc-%02x", name, e)] = encodeFuzzInput(m, reply)
			seeds[fmt.Sprintf("reply-%s-enc-%02x-truncated-server-hello", name, e)] =
				encodeFuzzInput(m, reply, prePkt(truncatedServerHello))
		}
		seeds["reply-"+name+"-then-alert"] = encodeFuzzInput(m, wiretest.PreloginReply(prelogin.EncryptOn), prePkt(alert))
	}
	payload := wiretest.PreloginPayload(prelogin.EncryptOn)
	seeds["reply-wrong-type-sqlbatch"] = encodeFuzzInput(modeTrue, wiretest.Packet(tds.TypeSQLBatch, tds.StatusEOM, payload, 0))
	seeds["reply-wrong-type-prelogin"] = encodeFuzzInput(modeTrue, wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, payload, 0))
	seeds["reply-length-4"] = encodeFuzzInput(modeTrue, wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, payload, 4))
	seeds["reply-length-8192"] = encodeFuzzInput(modeTrue, wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, payload, 8192))
	seeds["reply-no-eom"] = encodeFuzzInput(modeTrue, wiretest.Packet(tds.TypeTabularResult, 0, payload, 0), wiretest.PreloginReply(prelogin.EncryptOn))
	seeds["reply-split"] = encodeFuzzInput(modeTrue, wiretest.PreloginReply(prelogin.EncryptOn)[:11], wiretest.PreloginReply(prelogin.EncryptOn)[11:])
	seeds["reply-then-wrong-type-handshake"] = encodeFuzzInput(modeTrue, wiretest.PreloginReply(prelogin.EncryptOn),
		wiretest.Packet(tds.TypeSQLBatch, tds.StatusEOM, truncatedServerHello, 0))
	seeds["reply-then-handshake-length-9000"] = encodeFuzzInput(modeTrue, wiretest.PreloginReply(prelogin.EncryptOn),
		wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, truncatedServerHello, 9000))
	seeds["disable-plaintext-response"] = encodeFuzzInput(modeDisable, wiretest.PreloginReply(prelogin.EncryptNotSup),
		wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, []byte{0xFD, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, 0))
	seeds["bridge-truncated-server-hello"] = encodeFuzzInput(modeBridge, prePkt(truncatedServerHello))
	seeds["bridge-alert"] = encodeFuzzInput(modeBridge, prePkt(alert))
	seeds["bridge-wrong-type"] = encodeFuzzInput(modeBridge, wiretest.Packet(tds.TypeSQLBatch, tds.StatusEOM, truncatedServerHello, 0))
	seeds["bridge-tabular-handshake"] = encodeFuzzInput(modeBridgeTabular,
		wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, truncatedServerHello, 0))
	seeds["strict-alert"] = encodeFuzzInput(modeStrict, alert)
	seeds["strict-truncated-server-hello"] = encodeFuzzInput(modeStrict, truncatedServerHello)
	seeds["strict-prelogin-reply"] = encodeFuzzInput(modeStrict, wiretest.PreloginReply(prelogin.EncryptNotSup))

	// Real answers, recorded: every unit the server sent, one chunk each.
	record := func(name string, mode byte, units []wiretest.Unit) {
		var chunks [][]byte
		for _, u := range units {
			chunks = append(chunks, u.Bytes)
		}
		seeds[name] = encodeFuzzInput(mode, chunks...)
	}
	record("recorded-tdstest-full", modeTrue, captureTDS(t, tdstest.Config{}, "true"))
	record("recorded-tdstest-full-big", modeTrueBig, captureTDS(t, tdstest.Config{}, "true"))
	record("recorded-tdstest-login-only", modeFalse, captureTDS(t, tdstest.Config{Encryption: tdstest.EncryptOff}, "false"))
	record("recorded-tdstest-none", modeDisable, captureTDS(t, tdstest.Config{Encryption: tdstest.EncryptNotSup}, "disable"))
	record("recorded-tdstest-strict", modeStrict, captureTDS(t, tdstest.Config{Encryption: tdstest.EncryptStrict}, "strict"))
	record("recorded-bridge-records", modeBridge, captureBridge(t))
	return seeds
}

// captureTDS records what a tdstest server sends to the bridged connector (encrypt as given)
// for a login and SELECT 1.
func captureTDS(t *testing.T, cfg tdstest.Config, encrypt string) []wiretest.Unit {
	s := startTDS(t, cfg)
	p := proxy(t, s.Addr, nil)
	db := openBridged(t, s.DSN("encrypt="+encrypt, "certificate="+s.CAFile()), mssqlbridge.WithDialer(p))
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	if err := connectAndQuery(ctx, db, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	ss := waitSessions(t, p)
	return ss[0].Units(wiretest.ServerToClient)
}

// captureBridge records a bridge server's handshake and a few records.
func captureBridge(t *testing.T) []wiretest.Unit {
	s := bridgeRecords(t, 5, true)
	p := proxy(t, s.Addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	c, err := dialBridge(ctx, p.Addr, clientTLS(t), bridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _ = readAll(c.r)
	_ = c.b.Close()
	return waitSessions(t, p)[0].Units(wiretest.ServerToClient)
}
