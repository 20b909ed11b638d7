package mssqlbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// maxReplySize bounds the server's PRELOGIN reply (a few dozen bytes in practice); a longer
// one is refused before it is buffered.
const maxReplySize = tds.DefaultPacketSize

// tlsHandshakeRecord is the first byte of a TLS handshake record (RFC 8446 5.1): what the
// driver writes first when it runs TDS 8.0 itself.
const tlsHandshakeRecord = 0x16

// aLongTimeAgo is a deadline in the past, used to interrupt socket calls.
var aLongTimeAgo = time.Unix(1, 0)

// negotiate handles the driver's first Write, its PRELOGIN packet p: it sends the server p with
// the ENCRYPTION value the user asked for, reads the reply, decides per the negotiation table,
// runs the TLS handshake when one is due, and prepares the reply the driver reads, patched to
// NOT_SUP so that the driver (whose own encryption is disabled) talks plaintext TDS to the conn.
// On error the conn is in stateFailed and the error is sticky: nothing after the PRELOGIN is
// ever written. Called with wmu held, in stateNew.
//
// The dial context bounds the whole exchange: go-mssqldb writes its PRELOGIN right after the
// dial and cancels that context only when its connect returns, so a server that never answers
// fails the connection when the dial timeout expires (go-mssqldb's own TLS would wait forever
// unless a connection timeout is set).
func (c *conn) negotiate(p []byte) (err error) {
	ctx := c.dialCtx
	c.dialCtx = nil // not kept beyond the exchange
	if ctx == nil {
		ctx = context.Background()
	}
	c.trace.start(PhasePrelogin)
	defer func() {
		if err != nil {
			err = c.trace.fail(ctx, err)
			c.trace = nil
		}
		if err != nil && !c.transition(stateFailed, err) {
			err = errClosed // Close won the race
		}
	}()

	if err := checkPrelogin(p); err != nil {
		return err
	}
	// Interrupt the exchange when ctx ends; the caller's deadlines apply as well.
	stop := context.AfterFunc(ctx, func() { _ = c.raw.SetDeadline(aLongTimeAgo) })
	if err := c.rdl.enter(); err != nil {
		c.rdl.exit()
		stop()
		return fmt.Errorf("mssqlbridge: PRELOGIN: %w", err)
	}
	if err := c.wdl.enter(); err != nil {
		c.wdl.exit()
		c.rdl.exit()
		stop()
		return fmt.Errorf("mssqlbridge: PRELOGIN: %w", err)
	}
	mode, reply, err := c.exchange(ctx, p)
	c.wdl.exit()
	c.rdl.exit()
	if !stop() {
		// ctx ended: the socket's deadline is now in the past, so fail even if the exchange
		// completed in the meantime. The exchange's own error is only the consequence.
		return fmt.Errorf("mssqlbridge: PRELOGIN exchange interrupted: %w", ctx.Err())
	}
	if err != nil {
		return err
	}
	next, err := stateFor(mode)
	if err != nil {
		return err
	}
	c.mode = mode
	c.trace.negotiated(mode, c.tlsConn)
	c.pending = reply
	if !c.transition(next, nil) {
		return errClosed
	}
	return nil
}

// stateFor returns the state a conn enters once the PRELOGIN exchange has settled mode m.
func stateFor(m prelogin.Mode) (state, error) {
	switch m {
	case prelogin.ModeNone:
		return statePlain, nil
	case prelogin.ModeLoginOnly:
		return stateLoginOnly, nil
	case prelogin.ModeFull, prelogin.ModeStrict:
		return stateFull, nil
	default:
		return stateFailed, fmt.Errorf("mssqlbridge: internal error: PRELOGIN settled on an unknown encryption mode, %v", m)
	}
}

// startStrict runs the TDS 8.0 TLS handshake directly on the socket (ALPN "tds/8.0", TLS 1.3
// allowed), before any TDS byte; the driver's PRELOGIN then travels inside TLS.
func (c *conn) startStrict(ctx context.Context) error {
	cfg, err := c.settings.clientTLSConfig(ctx, c.host)
	if err != nil {
		return err
	}
	b, tc := bridge.Client(c.raw, cfg, bridge.Options{Direct: true})
	if err := tc.HandshakeContext(ctx); err != nil {
		return handshakeError(c.handshakeFacts(cfg, true), err)
	}
	c.bridge = b
	c.tlsConn = tc
	return c.readTLS(tc, b)
}

// checkPrelogin checks that p, the driver's first Write, is one whole PRELOGIN packet.
func checkPrelogin(p []byte) error {
	if len(p) > 0 && p[0] == tlsHandshakeRecord {
		return fmt.Errorf("%w: the driver started its own TLS handshake (encrypt=strict in the connector's config)", ErrDriverEncryption)
	}
	h, err := tds.ParseHeader(p)
	if err != nil {
		return fmt.Errorf("%w: first packet: %w", ErrUnexpectedWrite, err)
	}
	if h.Type != tds.TypePrelogin || h.Status&tds.StatusEOM == 0 || int(h.Length) != len(p) {
		return fmt.Errorf("%w: want one whole PRELOGIN packet first, got %v in a %d-byte write", ErrUnexpectedWrite, h, len(p))
	}
	return nil
}

// exchange sends the PRELOGIN, reads and checks the reply, and runs the handshake. It returns
// the mode settled and the reply packets to hand the driver.
func (c *conn) exchange(ctx context.Context, p []byte) (prelogin.Mode, []byte, error) {
	pkt := append([]byte(nil), p...)
	payload := pkt[tds.HeaderSize:]
	sent, err := c.settings.sendValue()
	if err != nil {
		return 0, nil, err
	}
	asked, err := prelogin.SetEncryption(payload, sent)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: driver's PRELOGIN: %w", ErrUnexpectedWrite, err)
	}
	if asked != prelogin.EncryptNotSup {
		// The driver would run its own TLS after the reply: inside ours, or in place of it.
		return 0, nil, fmt.Errorf("%w: the driver's PRELOGIN asks for ENCRYPTION %v (want NOT_SUP, which encrypt=disable sends)", ErrDriverEncryption, asked)
	}

	if c.strict {
		// TLS is up since the dial; PRELOGIN and its reply travel inside it, and the reply's
		// ENCRYPTION value is ignored (TDS 8.0).
		if _, err := c.tlsConn.Write(pkt); err != nil {
			return 0, nil, fmt.Errorf("mssqlbridge: send PRELOGIN: %w", err)
		}
		reply, _, err := readReply(c.in)
		if err != nil {
			return 0, nil, err
		}
		return prelogin.ModeStrict, reply, nil
	}

	if _, err := c.raw.Write(pkt); err != nil {
		return 0, nil, fmt.Errorf("mssqlbridge: send PRELOGIN: %w", err)
	}
	// The reply is read with exact reads from the socket, so that nothing after it is consumed
	// before the bridge takes the socket over.
	reply, got, err := readReply(c.raw)
	if err != nil {
		return 0, nil, err
	}
	mode, err := prelogin.ClientOutcome(sent, got)
	if err != nil {
		return 0, nil, negotiationError(err)
	}
	c.trace.preloginDone(sent, got, mode)
	switch mode {
	case prelogin.ModeNone:
		return mode, reply, c.startPlaintext()
	case prelogin.ModeLoginOnly, prelogin.ModeFull:
		return mode, reply, c.startTLS(ctx, mode)
	case prelogin.ModeStrict:
		// Only a STRICT value sent gives it, and that is sent only with c.strict (handled above).
		return 0, nil, fmt.Errorf("mssqlbridge: internal error: strict mode settled in PRELOGIN, after sending %v", sent)
	default:
		return 0, nil, fmt.Errorf("mssqlbridge: internal error: PRELOGIN settled on an unknown encryption mode, %v", mode)
	}
}

// startPlaintext makes the conn run without TLS: a bridge in plaintext mode carries both ways.
func (c *conn) startPlaintext() error {
	b := bridge.New(c.raw, bridge.Options{Role: bridge.RoleClient})
	c.bridge = b
	if err := b.StartPlaintext(); err != nil {
		return fmt.Errorf("mssqlbridge: start plaintext: %w", err)
	}
	c.plainW = b
	c.in = b
	return nil
}

// startTLS runs the TLS handshake inside PRELOGIN packets for mode, ModeLoginOnly or ModeFull,
// and sets where later Reads and Writes go.
func (c *conn) startTLS(ctx context.Context, mode prelogin.Mode) error {
	c.trace.start(PhaseHandshake)
	cfg, err := c.settings.clientTLSConfig(ctx, c.host)
	if err != nil {
		return err
	}
	// Login-only is TLS 1.2 at most: a TLS 1.3 server sends session tickets after the
	// handshake, as records the switch to plaintext would hand the driver as TDS bytes.
	allow13 := c.settings.allowTLS13(cfg) && mode == prelogin.ModeFull
	b, tc := bridge.Client(c.raw, cfg, bridge.Options{AllowTLS13: allow13})
	c.bridge = b
	if err := tc.Handshake(); err != nil {
		_ = b.SendPending() // the alert saying why, where crypto/tls wrote one
		return handshakeError(c.handshakeFacts(cfg, allow13), err)
	}
	if err := b.StartPassthrough(); err != nil {
		return fmt.Errorf("mssqlbridge: TLS handshake: %w", err)
	}
	c.tlsConn = tc
	switch mode {
	case prelogin.ModeLoginOnly:
		c.plainW = b
		c.in = b
		return nil
	case prelogin.ModeFull:
		return c.readTLS(tc, b)
	case prelogin.ModeNone, prelogin.ModeStrict:
		return fmt.Errorf("mssqlbridge: internal error: TLS inside PRELOGIN in %v mode", mode)
	default:
		return fmt.Errorf("mssqlbridge: internal error: TLS inside PRELOGIN in unknown mode %v", mode)
	}
}

// readReply reads the server's PRELOGIN reply (packet type 0x04, at most maxReplySize bytes)
// from r with exact reads. It returns the reply re-framed for the driver with ENCRYPTION
// patched to NOT_SUP, and the ENCRYPTION value the server sent.
func readReply(r io.Reader) ([]byte, prelogin.Encryption, error) {
	rd := tds.NewReader(r, tds.ReaderConfig{
		MaxPacketSize:  tds.DefaultPacketSize,
		MaxMessageSize: maxReplySize,
		Allowed:        tds.Types(tds.TypeTabularResult),
	})
	var (
		first   tds.Header
		payload []byte
	)
	for i := 0; ; i++ {
		h, body, err := rd.ReadPacket()
		if err != nil {
			if errors.Is(err, tds.ErrUnexpectedType) || errors.Is(err, tds.ErrShortLength) ||
				errors.Is(err, tds.ErrPacketTooLarge) || errors.Is(err, tds.ErrMessageTooLarge) ||
				errors.Is(err, tds.ErrTypeChanged) {
				return nil, 0, fmt.Errorf("%w: %w", ErrMalformedReply, err)
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, 0, fmt.Errorf("mssqlbridge: read PRELOGIN reply: server closed the connection: %w", err)
			}
			return nil, 0, fmt.Errorf("mssqlbridge: read PRELOGIN reply: %w", err)
		}
		if i == 0 {
			first = h
		}
		payload = append(payload, body...)
		if len(payload) > maxReplySize {
			return nil, 0, fmt.Errorf("%w: longer than %d bytes", ErrMalformedReply, maxReplySize)
		}
		if h.Status&tds.StatusEOM != 0 {
			break
		}
	}
	// Checked as a client reads a reply: options the driver and the bridge do not act on may
	// have any length (Babelfish sends TRACEID with none).
	got, err := prelogin.SetReplyEncryption(payload, prelogin.EncryptNotSup)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrMalformedReply, err)
	}
	return frameReply(first, payload), got, nil
}

// frameReply frames payload as the driver reads it: packets of at most tds.MinPacketSize
// bytes (the smallest packet size the driver may have been configured with), the server's
// type and SPID, EOM on the last.
func frameReply(first tds.Header, payload []byte) []byte {
	const maxBody = tds.MinPacketSize - tds.HeaderSize
	out := make([]byte, 0, len(payload)+(len(payload)/maxBody+1)*tds.HeaderSize)
	for id := uint8(1); ; id++ {
		n := min(len(payload), maxBody)
		h := tds.Header{Type: first.Type, SPID: first.SPID, PacketID: id, Length: uint16(tds.HeaderSize + n)}
		if n == len(payload) {
			h.Status = tds.StatusEOM
		}
		out = h.Append(out)
		out = append(out, payload[:n]...)
		payload = payload[n:]
		if len(payload) == 0 {
			return out
		}
	}
}

// negotiationError wraps a prelogin.ClientOutcome error: a refusal (ErrServerNoEncryption,
// ErrServerRequiresEncryption, the same values as prelogin's) keeps its sentinel; any other is
// ErrMalformedReply.
func negotiationError(err error) error {
	if errors.Is(err, ErrServerNoEncryption) || errors.Is(err, ErrServerRequiresEncryption) {
		return fmt.Errorf("mssqlbridge: PRELOGIN negotiation: %w", err)
	}
	return fmt.Errorf("%w: %w", ErrMalformedReply, err)
}

// handshakeError wraps a TLS handshake error: as one of the diagnoses of tlserrors.go when
// its cause is recognized (a certificate failure is a *CertificateError, wrapped by a
// diagnosis or not), else with the host dialed.
func handshakeError(f handshakeFacts, err error) error {
	if derr := diagnoseHandshake(f, err); derr != nil {
		return derr
	}
	return fmt.Errorf("mssqlbridge: TLS handshake with %s: %w", f.dialed, err)
}
