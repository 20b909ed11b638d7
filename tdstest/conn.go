package tdstest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strings"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/ucs2"
	l7 "github.com/tdsbridge/tdsbridge/login7"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// connState is a step of a connection's life. serve runs one step function per state; each
// returns the next state, and stateDone ends the loop.
//
//	first byte --0x12--> prelogin --(no TLS)--------------------------> login --> ready <-+
//	     |                   |                                          ^          |      |
//	     |                   +--(login-only or full)--> handshake ------+          +------+
//	     +--0x16 (TDS 8.0)--> strict handshake --> prelogin (inside TLS) --> login
//	every state --(error, fault, client gone)--> done
type connState uint8

const (
	stateFirstByte connState = iota // tell PRELOGIN (0x12) from a TLS ClientHello (0x16)
	statePrelogin                   // PRELOGIN request and reply
	stateHandshake                  // TLS inside PRELOGIN packets
	stateStrict                     // TDS 8.0: TLS directly on TCP
	stateLogin                      // LOGIN7 and the login response
	stateReady                      // requests: SQL batches, attention, ...
	stateDone
)

var connStateNames = [...]string{
	stateFirstByte: "first-byte", statePrelogin: "prelogin", stateHandshake: "handshake",
	stateStrict: "strict-handshake", stateLogin: "login", stateReady: "ready", stateDone: "done",
}

func (s connState) String() string {
	if int(s) < len(connStateNames) {
		return connStateNames[s]
	}
	return fmt.Sprintf("connState(%d)", uint8(s))
}

// Limits on client messages.
const (
	maxRequestMessage = 4 << 20
	firstSPID         = 51
)

// conn is one client connection. All of it runs on one goroutine (serve); only the socket is
// touched by Server.Close from another goroutine, which unblocks it.
type conn struct {
	srv    *Server
	id     int
	raw    net.Conn
	sock   *socket // raw with the peeked byte and the handshake fault writer
	b      *bridge.Conn
	tc     *tls.Conn
	faults faultState
	// mode is the encryption the connection ended up with, set once the PRELOGIN negotiation
	// (or the first byte, for TDS 8.0) has decided it; the log names it by its String.
	mode prelogin.Mode

	// TDS layer. src and sink are switched when the transport changes (plaintext, TLS).
	src  *switchReader
	in   *tds.Reader
	sink *faultWriter // under out: one Write per packet
	rec  *recordWriter
	out  *tds.Writer

	preReply   prelogin.Encryption
	encrypted  bool // every packet after login travels in TLS (full, strict)
	packetSize int
	tdsVersion uint32
	resetAck   bool // a RESETCONNECTION awaits its ENVCHANGE in the next response
	scratch    []byte
	valBuf     []byte // column values and streamed rows being encoded
	reqBuf     []byte // the request message being read

	// fedAuthRequired: the PRELOGIN reply carried FEDAUTHREQUIRED=1 (Config.FedAuthToken set
	// and the client offered FEDAUTHREQUIRED); a FEDAUTH login must echo it.
	fedAuthRequired bool

	// session is what statements read and change (session.go).
	session
	inProc bool        // statements run inside sp_executesql (DONEINPROC)
	bulk   *bulkTarget // set by INSERT BULK for the next request (BULK_LOAD)
	// prepared holds the statements of sp_prepexec by handle (1, 2, ... per connection, the
	// last in lastHandle); they live as long as the connection.
	prepared   map[int32]preparedStmt
	lastHandle int32
	// resetRequest: the current request reset the session; its transaction descriptor may
	// name the transaction the reset ended.
	resetRequest bool
}

func newConn(s *Server, raw net.Conn, id int) *conn {
	c := &conn{
		srv:        s,
		id:         id,
		raw:        raw,
		faults:     faultState{f: &s.Config.Faults, conn: id},
		packetSize: tds.DefaultPacketSize,
		session:    newSession(uint16(firstSPID + (id-1)%30000)),
	}
	return c
}

func (c *conn) logf(format string, args ...any) {
	c.srv.logf("tdstest: conn %d (%s): %s", c.id, c.raw.RemoteAddr(), fmt.Sprintf(format, args...))
}

// serve runs the connection to its end and closes the socket. A panic is recovered and logged:
// bad input must never take the test process down.
func (c *conn) serve() {
	defer func() {
		if r := recover(); r != nil {
			c.logf("panic (a bug in tdstest): %v\n%s", r, debug.Stack())
		}
		if c.b != nil {
			_ = c.b.Close()
		}
		_ = c.raw.Close()
	}()
	state := stateFirstByte
	for state != stateDone {
		next, err := c.step(state)
		if err != nil {
			c.finish(state, err)
			return
		}
		state = next
	}
}

func (c *conn) step(s connState) (connState, error) {
	switch s {
	case stateFirstByte:
		return c.firstByte()
	case statePrelogin:
		return c.prelogin()
	case stateHandshake:
		return c.handshake()
	case stateStrict:
		return c.strictHandshake()
	case stateLogin:
		return c.login()
	case stateReady:
		return c.request()
	}
	return stateDone, fmt.Errorf("tdstest: bad connection state %v", s)
}

// finish logs why the connection ends and carries out an injected fault.
func (c *conn) finish(s connState, err error) {
	var fe *faultError
	if errors.As(err, &fe) {
		c.logf("%v", fe)
		c.act(fe.Action)
		return
	}
	if errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		c.logf("client closed the connection in state %v", s)
		return
	}
	if errors.Is(err, net.ErrClosed) {
		c.logf("connection closed in state %v", s)
		return
	}
	c.logf("closing in state %v: %v", s, err)
}

// act carries out a fault action that ends the connection.
func (c *conn) act(a Action) {
	switch a {
	case ActionReset:
		if tc, ok := c.raw.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	case ActionStall:
		// Read and discard until the client closes or Server.Close closes the socket.
		_, _ = io.Copy(io.Discard, c.raw)
	case ActionCloseNotify:
		if c.tc != nil && c.mode != prelogin.ModeLoginOnly {
			_ = c.tc.Close() // close_notify, then the socket; serve closes the rest
		}
	}
}

// fault returns the fault action due at phase p (ActionNone if none) and, for the actions that
// end the connection at once (close, reset, stall), a *faultError to return from the step. For a
// mutation or ActionError the error is nil: the caller arms the sink or answers with an error
// token.
func (c *conn) fault(p Phase) (Action, error) {
	a := c.faults.at(p)
	switch a {
	case ActionNone:
		return a, nil
	case ActionClose, ActionReset, ActionStall, ActionCloseNotify:
		return a, &faultError{Phase: p, Action: a}
	}
	return a, nil
}

// firstByte peeks at the first byte and sets up the plaintext TDS layer.
func (c *conn) firstByte() (connState, error) {
	var b [1]byte
	if _, err := io.ReadFull(c.raw, b[:]); err != nil {
		return stateDone, fmt.Errorf("read first byte: %w", err)
	}
	c.sock = newSocket(c.raw, b[:])
	c.src = &switchReader{r: c.sock}
	c.in = tds.NewReader(c.src, tds.ReaderConfig{MaxPacketSize: tds.DefaultPacketSize})
	c.sink = &faultWriter{w: c.sock}
	c.out = tds.NewWriter(c.sink, tds.DefaultPacketSize)
	c.out.SetSPID(c.spid)
	cfg := &c.srv.Config
	switch {
	case b[0] == 0x16:
		if cfg.Encryption == EncryptNotSup {
			return stateDone, errors.New("client starts with TLS (TDS 8.0) but the server's encryption setting is NOT_SUP")
		}
		return stateStrict, nil
	case cfg.Encryption == EncryptStrict:
		return stateDone, fmt.Errorf("strict (TDS 8.0) server: client starts with byte 0x%02x, not a TLS ClientHello (0x16)", b[0])
	case b[0] == byte(tds.TypeLogin7):
		return c.loginWithoutPrelogin()
	case b[0] != byte(tds.TypePrelogin):
		return stateDone, fmt.Errorf("client starts with byte 0x%02x, want PRELOGIN (0x12), LOGIN7 (0x10) or a TLS ClientHello (0x16)", b[0])
	}
	return statePrelogin, nil
}

// loginWithoutPrelogin handles a connection whose first message is LOGIN7, as legacy clients
// send it. Such a client cannot encrypt, so it is treated like a client whose PRELOGIN says
// NOT_SUP (MS-TDS 2.2.6.5): with the server setting OFF or NOT_SUP the connection goes on without
// encryption; with ON, which requires encryption, the server reads the LOGIN7, answers with a
// login error and closes, so that the client learns why.
func (c *conn) loginWithoutPrelogin() (connState, error) {
	if c.srv.Config.Encryption.preloginSetting() == prelogin.EncryptOn {
		c.in.SetAllowed(tds.Types(tds.TypeLogin7))
		c.in.SetMaxMessageSize(l7.MaxLen)
		if _, _, err := c.in.ReadMessage(); err != nil {
			return stateDone, fmt.Errorf("read LOGIN7 sent without PRELOGIN: %w", err)
		}
		b := c.appendMessage(nil, tokenError, serverMessage{Number: 18456, State: 1, Class: 14,
			Text: "Login failed: the server requires encryption and the client sent LOGIN7 without PRELOGIN, so it cannot encrypt."})
		if err := c.out.WriteMessage(tds.TypeTabularResult, c.appendDone(b, doneError, 0, 0)); err == nil {
			_ = c.flush()
		}
		return stateDone, errors.New("LOGIN7 without PRELOGIN refused: the server's encryption setting ON requires encryption")
	}
	if err := c.startPlaintext(); err != nil {
		return stateDone, err
	}
	c.logf("LOGIN7 without PRELOGIN: no encryption (server setting %v)", c.srv.Config.Encryption.preloginSetting())
	return stateLogin, nil
}

// startPlaintext puts the connection in no-encryption mode: every byte from here on goes through
// a bridge in plaintext mode (its read-ahead) in both directions.
func (c *conn) startPlaintext() error {
	c.mode = prelogin.ModeNone
	c.b = bridge.New(c.sock, bridge.Options{Role: bridge.RoleServer})
	if err := c.b.StartPlaintext(); err != nil {
		return fmt.Errorf("start plaintext: %w", err)
	}
	c.src.r = c.b
	c.sink.w = c.b
	return nil
}

// prelogin answers the client's PRELOGIN per the negotiation table.
func (c *conn) prelogin() (connState, error) {
	m, err := c.readClientPrelogin()
	if err != nil {
		return stateDone, err
	}
	a, err := c.fault(PhasePrelogin)
	if err != nil {
		return stateDone, err
	}
	if a == ActionError {
		return stateDone, &faultError{Phase: PhasePrelogin, Action: ActionClose}
	}
	if a.isMutation() {
		c.sink.arm(PhasePrelogin, a, 0)
	}
	if c.mode == prelogin.ModeStrict {
		// TDS 8.0: TLS is in place; the ENCRYPTION value is ignored by both sides.
		reply, _, _ := prelogin.ServerReply(prelogin.EncryptOn, m.Encryption)
		if err := c.writePrelogin(m, reply); err != nil {
			return stateDone, err
		}
		return stateLogin, nil
	}
	reply, mode, closeAfter := prelogin.ServerReply(c.srv.Config.Encryption.preloginSetting(), m.Encryption)
	if c.srv.Config.Faults.ReplyNotSup {
		reply, mode, closeAfter = prelogin.EncryptNotSup, prelogin.ModeNone, false
	}
	c.preReply = reply
	if err := c.writePrelogin(m, reply); err != nil {
		return stateDone, err
	}
	if closeAfter {
		return stateDone, fmt.Errorf("encryption negotiation: client sent %v, server setting %v: replied %v and closing",
			m.Encryption, c.srv.Config.Encryption.preloginSetting(), reply)
	}
	switch mode {
	case prelogin.ModeLoginOnly, prelogin.ModeFull:
		c.mode = mode
		return stateHandshake, nil
	case prelogin.ModeNone:
		if err := c.startPlaintext(); err != nil {
			return stateDone, err
		}
		return stateLogin, nil
	case prelogin.ModeStrict: // decided by the first byte, never by PRELOGIN
		return stateDone, fmt.Errorf("encryption negotiation: PRELOGIN settled on %v mode", mode)
	default:
		return stateDone, fmt.Errorf("encryption negotiation: unknown mode %v", mode)
	}
}

func (c *conn) writePrelogin(client *prelogin.Message, reply prelogin.Encryption) error {
	c.fedAuthRequired = client.HasFedAuthRequired && c.srv.Config.FedAuthToken != ""
	payload, err := preloginReply(client, reply, c.fedAuthRequired)
	if err != nil {
		return err
	}
	if err := c.out.WriteMessage(tds.TypeTabularResult, payload); err != nil {
		return fmt.Errorf("write PRELOGIN reply: %w", err)
	}
	return c.flush()
}

// handshake runs TLS inside PRELOGIN packets through the bridge.
func (c *conn) handshake() (connState, error) {
	a, err := c.fault(PhaseHandshake)
	if err != nil {
		return stateDone, err
	}
	switch {
	case a == ActionError:
		return stateDone, &faultError{Phase: PhaseHandshake, Action: ActionClose}
	case a.isMutation():
		c.sock.fw.arm(PhaseHandshake, a, 0)
	}
	c.b, c.tc = bridge.Server(c.sock, c.srv.serverTLS, bridge.Options{})
	if err := c.tc.Handshake(); err != nil {
		return stateDone, fmt.Errorf("TLS handshake inside PRELOGIN: %w", err)
	}
	if err := c.b.StartPassthrough(); err != nil {
		return stateDone, fmt.Errorf("start passthrough: %w", err)
	}
	st := c.tc.ConnectionState()
	c.logf("%s %s established inside PRELOGIN (%s)", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), c.mode)
	if err := c.useTLS(); err != nil {
		return stateDone, err
	}
	return stateLogin, nil
}

// strictHandshake runs TLS directly on TCP (TDS 8.0), then the PRELOGIN exchange inside it.
func (c *conn) strictHandshake() (connState, error) {
	c.mode = prelogin.ModeStrict
	a, err := c.fault(PhaseHandshake)
	if err != nil {
		return stateDone, err
	}
	if a != ActionNone {
		// Nothing has been written yet: a mutation has no packet to mutate; close instead.
		return stateDone, &faultError{Phase: PhaseHandshake, Action: ActionClose}
	}
	c.b, c.tc = bridge.Server(c.sock, c.srv.strictTLS, bridge.Options{Direct: true})
	if err := c.tc.Handshake(); err != nil {
		return stateDone, fmt.Errorf("TLS handshake (strict, TDS 8.0): %w", err)
	}
	st := c.tc.ConnectionState()
	if st.NegotiatedProtocol != alpnTDS8 {
		return stateDone, fmt.Errorf("strict (TDS 8.0): client did not negotiate ALPN %q (got %q)", alpnTDS8, st.NegotiatedProtocol)
	}
	c.logf("%s %s established (strict, ALPN %s)", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), st.NegotiatedProtocol)
	if err := c.useTLS(); err != nil {
		return stateDone, err
	}
	return statePrelogin, nil
}

// useTLS makes the TDS layer read from and write to the tls.Conn, in c.mode: login-only, full
// or strict.
func (c *conn) useTLS() error {
	c.src.r = c.tc
	if n := c.srv.Config.RecordSize; n > 0 {
		c.rec = newRecordWriter(c.tc, n)
		c.sink.w = c.rec
	} else {
		c.sink.w = c.tc
	}
	switch c.mode {
	case prelogin.ModeFull, prelogin.ModeStrict:
		c.encrypted = true
	case prelogin.ModeLoginOnly:
	case prelogin.ModeNone:
		return fmt.Errorf("TLS in use in mode %v", c.mode)
	default:
		return fmt.Errorf("TLS in use in unknown mode %v", c.mode)
	}
	return nil
}

// flush ends the records of a message when RecordSize is set.
func (c *conn) flush() error {
	if c.rec == nil {
		return nil
	}
	return c.rec.Flush()
}

// readLogin7 reads the whole LOGIN7 message. With login-only encryption the first packet comes
// inside TLS and the rest, and everything after, in plaintext.
func (c *conn) readLogin7() ([]byte, error) {
	c.in.SetAllowed(tds.Types(tds.TypeLogin7))
	c.in.SetMaxMessageSize(l7.MaxLen)
	if c.mode != prelogin.ModeLoginOnly {
		_, payload, err := c.in.ReadMessage()
		if err != nil {
			return nil, fmt.Errorf("read LOGIN7: %w", err)
		}
		return payload, nil
	}
	h, body, err := c.in.ReadPacket()
	if err != nil {
		return nil, fmt.Errorf("read LOGIN7 (first packet, in TLS): %w", err)
	}
	msg := append([]byte(nil), body...)
	if err := c.b.StartPlaintext(); err != nil {
		return nil, fmt.Errorf("start plaintext after the first LOGIN7 packet: %w", err)
	}
	c.src.r = c.b
	c.sink.w = c.b
	c.rec = nil
	for h.Status&tds.StatusEOM == 0 {
		h, body, err = c.in.ReadPacket()
		if err != nil {
			return nil, fmt.Errorf("read LOGIN7 (plaintext packets): %w", err)
		}
		msg = append(msg, body...)
	}
	return msg, nil
}

// login reads LOGIN7, checks the credentials and answers.
func (c *conn) login() (connState, error) {
	payload, err := c.readLogin7()
	if err != nil {
		return stateDone, err
	}
	l, err := parseLogin7(payload)
	if err != nil {
		return stateDone, err
	}
	c.tdsVersion = l.TDSVersion // tokens from here on use the client's version
	cfg := &c.srv.Config
	if err := c.checkCredentials(l); err != nil {
		return stateDone, err
	}
	a, err := c.fault(PhaseLogin)
	if err != nil {
		return stateDone, err
	}
	switch {
	case a == ActionError:
		c.loginFailed(l.UserName, "fault injected at login")
		return stateDone, &faultError{Phase: PhaseLogin, Action: ActionClose}
	case a.isMutation():
		c.sink.arm(PhaseLogin, a, 0)
	}
	c.loggedIn(l.Database, l.principal(), l.HostName, l.AppName)
	size := c.loginPacketSize(l)
	var rt route
	if cfg.RouteTo != "" {
		rt, _ = parseRoute(cfg.RouteTo) // checked by validate
	}
	b := c.appendLoginResponse(c.scratch[:0], l, size, rt)
	c.scratch = b
	if err := c.out.WriteMessage(tds.TypeTabularResult, b); err != nil {
		return stateDone, fmt.Errorf("write login response: %w", err)
	}
	if err := c.flush(); err != nil {
		return stateDone, err
	}
	if cfg.RouteTo != "" {
		c.logf("login of %q routed to %s:%d; closing", l.UserName, rt.host, rt.port)
		return stateDone, nil
	}
	if err := c.usePacketSize(size); err != nil {
		return stateDone, err
	}
	c.logf("login of %q (TDS %#08x, %s, app %q, library %q): packet size %d (requested %d)",
		l.UserName, l.TDSVersion, c.mode, l.AppName, l.CtlIntName, size, l.PacketSize)
	return stateReady, nil
}

// usePacketSize switches both directions to the packet size the login response granted.
func (c *conn) usePacketSize(size int) error {
	if err := c.out.SetPacketSize(size); err != nil {
		return fmt.Errorf("set packet size: %w", err)
	}
	c.in.SetMaxPacketSize(size)
	c.packetSize = size
	return nil
}

// principal is the user a login is for: the user name, or the token's principal for FEDAUTH.
func (l *login7) principal() string {
	if l.FedAuth != nil {
		return tokenPrincipal
	}
	return l.UserName
}

// checkCredentials refuses SSPI logins, and logins whose user name and password, or whose
// federated authentication token, the server does not accept, with ERROR 18456.
func (c *conn) checkCredentials(l *login7) error {
	cfg := &c.srv.Config
	switch {
	case l.SSPILen > 0 && l.UserName == "":
		c.loginFailed(l.UserName, "integrated authentication (SSPI) is not supported by tdstest")
		return errors.New("login refused: SSPI")
	case l.FedAuth != nil:
		if why := c.checkFedAuth(l.FedAuth); why != "" {
			c.loginFailed(tokenPrincipal, why)
			return fmt.Errorf("login failed for %s: %s", tokenPrincipal, why)
		}
	case !strings.EqualFold(l.UserName, cfg.user()) || l.Password != cfg.password():
		c.loginFailed(l.UserName, "wrong user name or password")
		return fmt.Errorf("login failed for user %q: wrong user name or password", l.UserName)
	}
	return nil
}

// loginPacketSize is the packet size the server grants: the requested one (4096 when 0) within
// tds.MinPacketSize..tds.MaxPacketSize, at most tds.MaxEncryptedPacketSize when encrypted.
func (c *conn) loginPacketSize(l *login7) int {
	size := int(l.PacketSize)
	if size == 0 {
		size = tds.DefaultPacketSize
	}
	size = min(max(size, tds.MinPacketSize), tds.MaxPacketSize)
	if c.encrypted {
		size = min(size, tds.MaxEncryptedPacketSize)
	}
	return size
}

// appendLoginResponse appends the tokens of a successful login: ENVCHANGE database, collation
// (TDS 7.1 and later) and language, LOGINACK, the FEDAUTH feature acknowledgement, the routing
// ENVCHANGE when rt is set, ENVCHANGE packet size, DONE.
func (c *conn) appendLoginResponse(b []byte, l *login7, size int, rt route) []byte {
	b = appendEnvChangeString(b, envDatabase, c.database, "master")
	if l.TDSVersion>>24 != 0x70 { // SQL collations came with TDS 7.1
		b = appendEnvChangeCollation(b)
	}
	b = appendEnvChangeString(b, envLanguage, "us_english", "")
	b = appendLoginAck(b, loginAckVersion(l.TDSVersion))
	if l.FedAuth != nil {
		b = appendFeatureExtAckFedAuth(b)
	}
	if rt.host != "" {
		b = appendEnvChangeRouting(b, rt)
	}
	b = appendEnvChangePacketSize(b, size, c.packetSize)
	return c.appendDone(b, doneFinal, 0, 0)
}

// loginFailed sends ERROR 18456 and a DONE with the error bit; errors writing it are ignored
// (the connection closes anyway).
func (c *conn) loginFailed(user, why string) {
	c.logf("login failed for user %q: %s", user, why)
	b := c.appendMessage(nil, tokenError, serverMessage{
		Number: 18456, State: 1, Class: 14,
		Text: fmt.Sprintf("Login failed for user '%s'.", user),
	})
	b = c.appendDone(b, doneError, 0, 0)
	if err := c.out.WriteMessage(tds.TypeTabularResult, b); err == nil {
		_ = c.flush()
	}
}

// request reads and answers one client request. A BULK_LOAD message is decoded as it arrives,
// packet by packet; any other request is read whole (at most maxRequestMessage bytes).
func (c *conn) request() (connState, error) {
	if err := c.idleFault(); err != nil {
		return stateDone, err
	}
	c.in.SetAllowed(tds.Types(tds.TypeSQLBatch, tds.TypeRPC, tds.TypeAttention, tds.TypeTransactionManager, tds.TypeBulkLoad))
	c.in.SetMaxMessageSize(maxBulkMessage)
	h, body, err := c.in.ReadPacket()
	if err != nil {
		return stateDone, fmt.Errorf("read request: %w", err)
	}
	typ, eom := h.Type, h.Status&tds.StatusEOM != 0
	c.resetRequest = h.Status&(tds.StatusResetConnection|tds.StatusResetConnectionSkipTran) != 0
	if c.resetRequest {
		c.resetSession()
	}
	bulk := c.bulk
	c.bulk = nil // INSERT BULK arms exactly the next request
	if typ == tds.TypeBulkLoad {
		c.bulk = bulk
		return stateReady, c.bulkLoad(body, eom)
	}
	payload, err := c.readRequestRest(typ, body, eom)
	if err != nil {
		return stateDone, err
	}
	if c.in.MessageStatus()&tds.StatusIgnore != 0 {
		c.logf("ignoring a %v message with the IGNORE bit", typ)
		return stateReady, nil
	}
	return c.answerRequest(typ, payload)
}

// readRequestRest reads the rest of a request message whose first packet's body is body, up to
// maxRequestMessage bytes in all. The result aliases c.reqBuf until the next request.
func (c *conn) readRequestRest(typ tds.PacketType, body []byte, eom bool) ([]byte, error) {
	payload := append(c.reqBuf[:0], body...)
	for !eom {
		h, body, err := c.in.ReadPacket()
		if err != nil {
			return nil, fmt.Errorf("read request: %w", err)
		}
		if len(payload)+len(body) > maxRequestMessage {
			return nil, fmt.Errorf("read request: %v message larger than %d bytes", typ, maxRequestMessage)
		}
		payload = append(payload, body...)
		eom = h.Status&tds.StatusEOM != 0
	}
	if cap(payload) <= maxRequestMessage/4 {
		c.reqBuf = payload[:0] // keep small buffers for the next request
	}
	return payload, nil
}

// answerRequest answers a request read whole: an ATTENTION, a SQL batch, an RPC or a
// transaction manager request (the last two need TDS 7.2); any other type is refused.
func (c *conn) answerRequest(typ tds.PacketType, payload []byte) (connState, error) {
	switch typ {
	case tds.TypeAttention:
		c.logf("attention: answering DONE with the attention bit")
		return stateReady, c.writeTokens(c.appendDone(c.scratch[:0], doneAttn, 0, 0))
	case tds.TypeSQLBatch:
		return c.sqlBatch(payload)
	case tds.TypeRPC, tds.TypeTransactionManager:
		if isLegacyTDS(c.tdsVersion) {
			return stateReady, c.refuse(fmt.Sprintf("tdstest: %v requests need TDS 7.2 or later (this login used TDS %#08x)", typ, c.tdsVersion))
		}
	}
	switch typ {
	case tds.TypeRPC:
		return stateReady, c.rpc(payload)
	case tds.TypeTransactionManager:
		return stateReady, c.transactionRequest(payload)
	default:
		return stateReady, c.refuse(fmt.Sprintf("tdstest: %v requests are not supported", typ))
	}
}

// sqlBatch answers a SQL batch: UCS-2 text, after ALL_HEADERS since TDS 7.2, whose transaction
// descriptor must name the open transaction or none.
func (c *conn) sqlBatch(payload []byte) (connState, error) {
	if isLegacyTDS(c.tdsVersion) {
		if len(payload)%2 != 0 {
			return stateDone, fmt.Errorf("SQL batch text has an odd number of bytes (%d)", len(payload))
		}
		return stateReady, c.batch(ucs2.Decode(payload))
	}
	text, desc, err := batchText(payload)
	if err != nil {
		return stateDone, err
	}
	if err := c.checkTranDesc(desc); err != nil {
		return stateReady, c.refuse(err.Error())
	}
	return stateReady, c.batch(text)
}

// idleFault applies the fault configured for PhaseIdle (see there).
func (c *conn) idleFault() error {
	a, err := c.fault(PhaseIdle)
	if err != nil || a != ActionError {
		return err
	}
	c.logf("sending an unsolicited ERROR 596 while the connection is idle, then closing")
	b := c.appendMessage(c.scratch[:0], tokenError, serverMessage{Number: 596, State: 1, Class: 21,
		Text: "Cannot continue the execution because the session is in the kill state."})
	if err := c.writeTokens(c.appendDone(b, doneError, 0, 0)); err != nil {
		return err
	}
	return &faultError{Phase: PhaseIdle, Action: ActionError}
}

// maxBulkMessage bounds a BULK_LOAD message, which is decoded as it arrives (1 TiB).
const maxBulkMessage = 1 << 40

// refuse answers a request with ERROR 50000 and DONE with the error bit.
func (c *conn) refuse(msg string) error {
	c.logf("refused: %s", msg)
	b := c.appendMessage(c.scratch[:0], tokenError, serverMessage{Number: 50000, State: 1, Class: 16, Text: msg})
	return c.writeTokens(c.appendDone(b, doneError, 0, 0))
}

// writeTokens sends b as one tabular result message, after a pending RESETCONNECTION
// acknowledgement.
func (c *conn) writeTokens(b []byte) error {
	c.scratch = b
	c.out.BeginMessage(tds.TypeTabularResult, 0)
	var ack [6]byte
	if _, err := c.out.Write(c.takeResetAck(ack[:0])); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	if _, err := c.out.Write(b); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	if err := c.out.EndMessage(); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return c.flush()
}

// skipAllHeaders checks the ALL_HEADERS block and returns what follows it.
func skipAllHeaders(p []byte) ([]byte, error) {
	rest, _, err := allHeaders(p)
	return rest, err
}

// batchText extracts the SQL text of a SQL batch payload (ALL_HEADERS, then UCS-2) and the
// transaction descriptor of its headers.
func batchText(p []byte) (string, uint64, error) {
	text, desc, err := allHeaders(p)
	if err != nil {
		return "", 0, fmt.Errorf("SQL batch: %w", err)
	}
	if len(text)%2 != 0 {
		return "", 0, fmt.Errorf("SQL batch text has an odd number of bytes (%d)", len(text))
	}
	return ucs2.Decode(text), desc, nil
}
