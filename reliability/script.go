package reliability

import (
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// ScriptServer is a loopback server whose connections each run a test's script: a peer that
// misbehaves exactly as a test needs. The script owns the conn while it runs; the server
// closes the conn when the script returns.
type ScriptServer struct {
	// Addr is the listening address, "127.0.0.1:port".
	Addr string

	script func(c net.Conn)
	ln     net.Listener

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewScriptServer starts a server on 127.0.0.1:0 that runs script on every accepted
// connection, each on its own goroutine. The caller must Close it.
func NewScriptServer(script func(c net.Conn)) (*ScriptServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("reliability: script server: listen: %w", err)
	}
	s := &ScriptServer{Addr: ln.Addr().String(), script: script, ln: ln, conns: make(map[net.Conn]struct{})}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *ScriptServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() {
				_ = c.Close()
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
			}()
			s.script(c)
		}()
	}
}

// Close stops the listener, closes every connection (which unblocks the scripts) and returns
// when every script has returned. A second Close returns an error matching net.ErrClosed.
func (s *ScriptServer) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("reliability: script server: %w", net.ErrClosed)
	}
	s.closed = true
	err := s.ln.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("reliability: script server: close: %w", err)
	}
	return nil
}

// ReadClientPrelogin reads the client's PRELOGIN message from c and decodes it.
func ReadClientPrelogin(c net.Conn) (*prelogin.Message, error) {
	rd := tds.NewReader(c, tds.ReaderConfig{Allowed: tds.Types(tds.TypePrelogin), MaxMessageSize: tds.DefaultPacketSize})
	_, payload, err := rd.ReadMessage()
	if err != nil {
		return nil, fmt.Errorf("reliability: read client PRELOGIN: %w", err)
	}
	m := new(prelogin.Message)
	if err := m.Decode(payload); err != nil {
		return nil, fmt.Errorf("reliability: decode client PRELOGIN: %w", err)
	}
	return m, nil
}

// PreloginPayload returns a PRELOGIN payload with VERSION and ENCRYPTION e, as a server
// would send it (or as a client, for a client-side exchange).
func PreloginPayload(e prelogin.Encryption) []byte {
	m := prelogin.Message{
		Version: prelogin.Version{Major: 16, Build: 1000}, HasVersion: true,
		Encryption: e, HasEncryption: true,
		Instance: []byte{0}, HasInstance: true,
		HasThreadID: true, ThreadIDEmpty: true,
		HasMARS: true,
	}
	b, err := m.Encode(nil)
	if err != nil {
		// The message above is fixed and valid; Encode cannot fail on it.
		return nil
	}
	return b
}

// Packet returns one whole TDS packet: header (type, status, Length = 8+len(payload), SPID 0,
// PacketID 1) then payload. length, when nonzero, replaces the Length field (to lie about it).
func Packet(typ tds.PacketType, status tds.Status, payload []byte, length int) []byte {
	h := tds.Header{Type: typ, Status: status, Length: uint16(tds.HeaderSize + len(payload)), PacketID: 1}
	if length != 0 {
		h.Length = uint16(length)
	}
	return append(h.Append(nil), payload...)
}

// PreloginReply returns a server's PRELOGIN reply packet (type 0x04, EOM) with ENCRYPTION e.
func PreloginReply(e prelogin.Encryption) []byte {
	return Packet(tds.TypeTabularResult, tds.StatusEOM, PreloginPayload(e), 0)
}
