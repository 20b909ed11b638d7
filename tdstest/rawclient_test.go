package tdstest

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/ucs2"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// rawClient is a minimal TDS client for wire-level tests: it drives PRELOGIN, TLS (through a
// client bridge), LOGIN7 and SQL batches by hand and records the size of every TLS record it
// receives after the handshake.
type rawClient struct {
	t       *testing.T
	raw     net.Conn
	b       *bridge.Conn
	tc      *tls.Conn
	rec     *recordReader
	src     *switchReader
	r       *tds.Reader
	w       *tds.Writer
	mode    prelogin.Mode
	version uint32 // LOGIN7's TDS version; 0: goodLogin7's (7.4)
}

// recordReader reads a tls.Conn one record at a time (a tls.Conn Read returns at most one
// record's plaintext) and records each record's size.
type recordReader struct {
	tc      *tls.Conn
	buf     []byte
	pending []byte
	sizes   []int
}

func (r *recordReader) Read(p []byte) (int, error) {
	if len(r.pending) == 0 {
		n, err := r.tc.Read(r.buf)
		if n > 0 {
			r.sizes = append(r.sizes, n)
			r.pending = r.buf[:n]
		}
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

func dialRaw(t *testing.T, s *Server) *rawClient {
	t.Helper()
	raw, err := net.DialTimeout("tcp", s.Addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = raw.SetDeadline(time.Now().Add(30 * time.Second))
	c := &rawClient{t: t, raw: raw, src: &switchReader{r: raw}}
	c.r = tds.NewReader(c.src, tds.ReaderConfig{MaxPacketSize: tds.MaxPacketSize, MaxMessageSize: 64 << 20})
	c.w = tds.NewWriter(raw, tds.DefaultPacketSize)
	t.Cleanup(func() { _ = raw.Close() })
	return c
}

// prelogin sends PRELOGIN with enc and returns the server's reply value; c.mode is the mode
// it settled.
func (c *rawClient) prelogin(enc prelogin.Encryption) (prelogin.Encryption, error) {
	var m prelogin.Message
	m.Version, m.HasVersion = prelogin.Version{Major: 1}, true
	m.Encryption, m.HasEncryption = enc, true
	m.Instance, m.HasInstance = []byte{0}, true
	m.ThreadID, m.HasThreadID = 1, true
	m.MARS, m.HasMARS = 0, true
	p, err := m.Encode(nil)
	if err != nil {
		return 0, err
	}
	if err := c.w.WriteMessage(tds.TypePrelogin, p); err != nil {
		return 0, err
	}
	typ, payload, err := c.r.ReadMessage()
	if err != nil {
		return 0, err
	}
	if typ != tds.TypeTabularResult {
		return 0, fmt.Errorf("PRELOGIN reply of type %v", typ)
	}
	var reply prelogin.Message
	if err := reply.Decode(payload); err != nil {
		return 0, err
	}
	c.mode, err = prelogin.ClientOutcome(enc, reply.Encryption)
	return reply.Encryption, err
}

// startTLS runs the TLS handshake inside PRELOGIN with cfg (nil: trust the server).
func (c *rawClient) startTLS(s *Server, cfg *tls.Config) error {
	if cfg == nil {
		cfg = s.TLSConfig()
	}
	c.b = bridge.New(c.raw, bridge.Options{Role: bridge.RoleClient})
	c.tc = tls.Client(c.b, bridge.TLSConfig(cfg, cfg.MinVersion == tls.VersionTLS13))
	if err := c.tc.Handshake(); err != nil {
		return err
	}
	if err := c.b.StartPassthrough(); err != nil {
		return err
	}
	c.rec = &recordReader{tc: c.tc, buf: make([]byte, 64<<10)}
	c.src.r = c.rec
	c.w = tds.NewWriter(c.tc, tds.DefaultPacketSize)
	return nil
}

// connect does PRELOGIN (ON), TLS and LOGIN7 with the server's credentials and packet size.
func (c *rawClient) connect(s *Server, packetSize int) []byte {
	c.t.Helper()
	if _, err := c.prelogin(prelogin.EncryptOn); err != nil {
		c.t.Fatal(err)
	}
	if err := c.startTLS(s, nil); err != nil {
		c.t.Fatal(err)
	}
	resp, err := c.login(s.Config.user(), s.Config.password(), packetSize)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// login sends LOGIN7 and returns the login response payload. With login-only encryption the
// client switches to plaintext after the first packet.
func (c *rawClient) login(user, password string, packetSize int) ([]byte, error) {
	l := goodLogin7()
	l.user, l.password, l.packetSize = user, password, uint32(packetSize)
	if c.version != 0 {
		l.version = c.version
	}
	if err := c.w.WriteMessage(tds.TypeLogin7, encodeLogin7(l)); err != nil {
		return nil, err
	}
	if c.mode == prelogin.ModeLoginOnly {
		if err := c.b.StartPlaintext(); err != nil {
			return nil, err
		}
		c.src.r = c.b
		c.w = tds.NewWriter(c.b, tds.DefaultPacketSize)
	}
	_, payload, err := c.r.ReadMessage()
	if err != nil {
		return nil, err
	}
	resp := append([]byte(nil), payload...)
	if _, ok := findToken(resp, tokenLoginAck); ok && packetSize != 0 {
		size := packetSize
		if c.mode == prelogin.ModeFull {
			size = min(size, tds.MaxEncryptedPacketSize)
		}
		if err := c.w.SetPacketSize(size); err != nil {
			return nil, err
		}
		c.r.SetMaxPacketSize(size)
	}
	return resp, nil
}

// batchMessage builds a SQL batch payload: ALL_HEADERS with a transaction descriptor, then text.
func batchMessage(text string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 22) // TotalLength
	b = binary.LittleEndian.AppendUint32(b, 18)    // header length
	b = binary.LittleEndian.AppendUint16(b, 2)     // transaction descriptor
	b = binary.LittleEndian.AppendUint64(b, 0)     // descriptor
	b = binary.LittleEndian.AppendUint32(b, 1)     // outstanding requests
	return ucs2.Append(b, text)
}

// query sends a SQL batch and returns the response payload.
func (c *rawClient) query(text string) ([]byte, error) {
	if err := c.w.WriteMessage(tds.TypeSQLBatch, batchMessage(text)); err != nil {
		return nil, err
	}
	_, payload, err := c.r.ReadMessage()
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), payload...), nil
}

// expectClosed reads until the server closes the connection and fails if it does not.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	_ = c.raw.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, c.raw)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatal("server did not close the connection")
	}
}

// token is one decoded response token (test decoder for the tokens tdstest writes).
type token struct {
	typ    byte
	status uint16 // DONE
	count  uint64 // DONE
	number int32  // ERROR, INFO
	text   string // ERROR, INFO message; ENVCHANGE new value
	env    byte   // ENVCHANGE type
	values []any  // ROW: int32, string (nvarchar), []byte (varbinary)
	plp    []int  // ROW: PLP chunk sizes of the last (max) value
	raw    []byte // ENVCHANGE of a transaction: new and old B_VARBYTE values
}

// rawColumn is a column of COLMETADATA as decodeTokens reads it: the data type and the
// USHORTLEN of variable types.
type rawColumn struct {
	typ    dataType
	maxLen uint16
}

// decodeTokens decodes a tabular result made of the tokens tdstest writes.
func decodeTokens(b []byte) ([]token, error) {
	le := binary.LittleEndian
	var out []token
	var cols []rawColumn
	for len(b) > 0 {
		t := token{typ: b[0]}
		b = b[1:]
		switch t.typ {
		case tokenEnvChange, tokenLoginAck, tokenError, tokenInfo:
			if len(b) < 2 || int(le.Uint16(b))+2 > len(b) {
				return nil, fmt.Errorf("token 0x%02x: bad length", t.typ)
			}
			n := int(le.Uint16(b))
			body := b[2 : 2+n]
			b = b[2+n:]
			switch t.typ {
			case tokenEnvChange:
				t.env = body[0]
				switch t.env {
				case envBeginTran, envCommitTran, envRollbackTran:
					t.raw = append([]byte(nil), body[1:]...)
				case envCollation:
				default:
					t.text = ucs2.Decode(body[2 : 2+2*int(body[1])])
				}
			case tokenError, tokenInfo:
				t.number = int32(le.Uint32(body))
				m := int(le.Uint16(body[6:]))
				t.text = ucs2.Decode(body[8 : 8+2*m])
			}
		case tokenDone:
			if len(b) < 12 {
				return nil, errors.New("DONE truncated")
			}
			t.status, t.count = le.Uint16(b), le.Uint64(b[4:])
			b = b[12:]
		case tokenColMetadata:
			n := int(le.Uint16(b))
			b = b[2:]
			cols = cols[:0]
			for i := 0; i < n; i++ {
				c := rawColumn{typ: dataType(b[6])}
				b = b[7:]
				switch c.typ {
				case dtNVarChar:
					c.maxLen = le.Uint16(b)
					b = b[2+5:]
				case dtBigVarBinary:
					c.maxLen = le.Uint16(b)
					b = b[2:]
				}
				b = b[1+2*int(b[0]):] // name
				cols = append(cols, c)
			}
		case tokenRow:
			for _, c := range cols {
				switch {
				case c.typ == dtInt4:
					t.values = append(t.values, int32(le.Uint32(b)))
					b = b[4:]
				case c.maxLen == plpMaxLen:
					total := le.Uint64(b)
					b = b[8:]
					var v []byte
					t.plp = t.plp[:0]
					for {
						n := int(le.Uint32(b))
						b = b[4:]
						if n == 0 {
							break
						}
						t.plp = append(t.plp, n)
						v = append(v, b[:n]...)
						b = b[n:]
					}
					if uint64(len(v)) != total {
						return nil, fmt.Errorf("PLP total %d, chunks hold %d", total, len(v))
					}
					if c.typ == dtNVarChar {
						t.values = append(t.values, ucs2.Decode(v))
					} else {
						t.values = append(t.values, v)
					}
				default:
					n := int(le.Uint16(b))
					t.values = append(t.values, ucs2.Decode(b[2:2+n]))
					b = b[2+n:]
				}
			}
		default:
			return nil, fmt.Errorf("unexpected token 0x%02x", t.typ)
		}
		out = append(out, t)
	}
	return out, nil
}

// findToken reports whether the response holds a token of type typ, and the first one.
func findToken(resp []byte, typ byte) (token, bool) {
	toks, err := decodeTokens(resp)
	if err != nil {
		return token{}, false
	}
	for _, t := range toks {
		if t.typ == typ {
			return t, true
		}
	}
	return token{}, false
}
