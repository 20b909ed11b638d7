package wiretest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"

	"github.com/tdsbridge/tdsbridge/internal/loopback"
)

// Direction is the way bytes travel through a Proxy.
type Direction uint8

const (
	// ClientToServer: bytes the client wrote, on their way to the server.
	ClientToServer Direction = iota
	// ServerToClient: bytes the server wrote, on their way to the client.
	ServerToClient
)

// String returns "client->server" or "server->client".
func (d Direction) String() string {
	switch d {
	case ClientToServer:
		return "client->server"
	case ServerToClient:
		return "server->client"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// UnitKind says how a Unit was framed.
type UnitKind uint8

const (
	// UnitTDS is a TDS packet: an 8-byte header whose Length (bytes 2-3, big-endian) counts the
	// whole packet.
	UnitTDS UnitKind = iota
	// UnitTLS is a TLS record: a 5-byte header (content type 0x14..0x17, version, length), then
	// length bytes.
	UnitTLS
	// UnitRaw is bytes that could not be framed: a TDS header whose Length is below 8, a unit
	// cut short by the end of the stream, or anything after either (framing is lost for good).
	UnitRaw
)

// String returns "tds", "tls" or "raw".
func (k UnitKind) String() string {
	switch k {
	case UnitTDS:
		return "tds"
	case UnitTLS:
		return "tls"
	case UnitRaw:
		return "raw"
	}
	return fmt.Sprintf("UnitKind(%d)", uint8(k))
}

// Unit is one framed piece of a direction's stream. A TDS stream over the bridge is a run of
// TDS packets (PRELOGIN, the TLS handshake inside PRELOGIN packets, plaintext TDS) and TLS
// records (after the handshake in full encryption; the LOGIN7 record in login-only mode; all
// of a strict connection). They are told apart by their first byte: 0x14..0x17 are the TLS
// content types, which no TDS packet type uses.
type Unit struct {
	Kind  UnitKind
	Index int    // position among the units of its direction, counting from 0
	Bytes []byte // the whole unit, header included
}

// Type returns the first byte of the unit: the TDS packet type or the TLS content type (0 for
// an empty unit).
func (u Unit) Type() byte {
	if len(u.Bytes) == 0 {
		return 0
	}
	return u.Bytes[0]
}

// Verdict is what a Tamper decides for one unit.
type Verdict struct {
	// Send is what goes on to the receiver in place of the unit: u.Bytes (possibly modified in
	// place) to pass it, something else to replace it, nil to drop it.
	Send []byte
	// Back is sent to the unit's sender, before Send goes on: a proxy answering on the
	// receiver's behalf.
	Back []byte
	// Close closes both connections once Send and Back are written.
	Close bool
}

// Tamper decides, for each unit the proxy reads, what to forward. It runs on the goroutine
// of the unit's direction: calls for one direction are sequential, the two directions run
// concurrently. It may modify u.Bytes in place (the recording keeps the original bytes).
type Tamper func(dir Direction, u *Unit) Verdict

// Pass is a Tamper that forwards every unit unchanged.
func Pass(_ Direction, u *Unit) Verdict { return Verdict{Send: u.Bytes} }

// maxUnit bounds a unit: the largest TDS packet is 65535 bytes by its length field and the
// largest TLS record 5+65535, so a unit never needs more.
const maxUnit = 5 + 65535

// Proxy is a loopback TCP proxy for tests. Each accepted connection is forwarded to the
// target; both directions are framed into units, recorded (Session) and passed through the
// Tamper. When a direction ends (EOF) the proxy half-closes the other side's write half, so
// the peer sees the same end of stream; any other error, or a Verdict with Close, closes both
// connections.
//
// Its methods may be called from several goroutines.
type Proxy struct {
	// Addr is the proxy's listening address, "127.0.0.1:port".
	Addr string

	target string
	tamper Tamper
	lb     *loopback.Server // the listener, both conns of every session, their goroutines

	mu       sync.Mutex
	sessions []*Session // in accept order
}

// NewProxy starts a proxy on 127.0.0.1:0 that forwards to target through tamper (nil: Pass).
// The caller must Close it.
func NewProxy(target string, tamper Tamper) (*Proxy, error) {
	if tamper == nil {
		tamper = Pass
	}
	lb, err := loopback.Listen("")
	if err != nil {
		return nil, fmt.Errorf("wiretest: proxy: %w", err)
	}
	p := &Proxy{Addr: lb.Addr(), target: target, tamper: tamper, lb: lb}
	if err := lb.Serve(p.serve); err != nil {
		_ = lb.Close()
		return nil, fmt.Errorf("wiretest: proxy: %w", err)
	}
	return p, nil
}

// DialContext dials the proxy, whatever address is asked for: a go-mssqldb Dialer (for
// mssqlbridge.WithDialer) that sends every connection through the proxy.
func (p *Proxy) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", p.Addr)
}

// Sessions returns the sessions so far, one per accepted connection, in accept order.
func (p *Proxy) Sessions() []*Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Session(nil), p.sessions...)
}

// Close stops the listener, closes every connection and returns when every goroutine of the
// proxy has ended. A second Close returns an error matching net.ErrClosed.
func (p *Proxy) Close() error {
	if err := p.lb.Close(); err != nil {
		return fmt.Errorf("wiretest: proxy: %w", err)
	}
	return nil
}

// addSession records s, the session of the id-th accepted connection, keeping accept order.
func (p *Proxy) addSession(s *Session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := len(p.sessions)
	for i > 0 && p.sessions[i-1].id > s.id {
		i--
	}
	p.sessions = slices.Insert(p.sessions, i, s)
}

// serve connects to the target and runs both directions of one session; the client conn
// is closed by the loopback server when serve returns.
func (p *Proxy) serve(client net.Conn, id int) {
	s := &Session{id: id, done: make(chan struct{})}
	p.addSession(s)
	defer close(s.done)
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		s.setErr(fmt.Errorf("wiretest: proxy: dial %s: %w", p.target, err))
		return
	}
	if !p.lb.Track(server) {
		return
	}
	defer p.lb.Untrack(server)
	closeBoth := sync.OnceFunc(func() {
		_ = client.Close()
		_ = server.Close()
	})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pump(s, ClientToServer, client, server, closeBoth) }()
	go func() { defer wg.Done(); p.pump(s, ServerToClient, server, client, closeBoth) }()
	wg.Wait()
	closeBoth()
}

// pump moves one direction: read a unit from src, record it, ask the tamper, write.
func (p *Proxy) pump(s *Session, dir Direction, src, dst net.Conn, closeBoth func()) {
	fr := framer{r: src}
	for idx := 0; ; idx++ {
		u, rerr := fr.next()
		if len(u.Bytes) > 0 {
			u.Index = idx
			s.record(dir, u)
			v := p.tamper(dir, &u)
			if len(v.Back) > 0 {
				if _, err := src.Write(v.Back); err != nil {
					closeBoth()
					return
				}
				s.deliver(1-dir, v.Back)
			}
			if len(v.Send) > 0 {
				if _, err := dst.Write(v.Send); err != nil {
					closeBoth()
					return
				}
				s.deliver(dir, v.Send)
			}
			if v.Close {
				closeBoth()
				return
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
					return
				}
			}
			closeBoth()
			return
		}
	}
}

// framer splits a stream into units (see Unit). After the first unit it cannot frame, it
// returns raw chunks as they are read.
type framer struct {
	r   io.Reader
	raw bool
	buf [maxUnit]byte
}

// next reads the next unit. It returns the unit read so far (possibly partial, as UnitRaw)
// together with the error that ended it. The returned Bytes are a fresh copy.
func (f *framer) next() (Unit, error) {
	if f.raw {
		n, err := f.r.Read(f.buf[:32<<10])
		return Unit{Kind: UnitRaw, Bytes: clone(f.buf[:n])}, err
	}
	if _, err := io.ReadFull(f.r, f.buf[:1]); err != nil {
		return Unit{}, err
	}
	kind, hdr := UnitTDS, 8
	if t := f.buf[0]; t >= 0x14 && t <= 0x17 {
		kind, hdr = UnitTLS, 5
	}
	if n, err := io.ReadFull(f.r, f.buf[1:hdr]); err != nil {
		f.raw = true
		return Unit{Kind: UnitRaw, Bytes: clone(f.buf[:1+n])}, err
	}
	var total int
	if kind == UnitTLS {
		total = hdr + (int(f.buf[3])<<8 | int(f.buf[4]))
	} else {
		total = int(f.buf[2])<<8 | int(f.buf[3])
		if total < hdr {
			f.raw = true
			return Unit{Kind: UnitRaw, Bytes: clone(f.buf[:hdr])}, nil
		}
	}
	if n, err := io.ReadFull(f.r, f.buf[hdr:total]); err != nil {
		f.raw = true
		return Unit{Kind: UnitRaw, Bytes: clone(f.buf[:hdr+n])}, err
	}
	return Unit{Kind: kind, Bytes: clone(f.buf[:total])}, nil
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }
