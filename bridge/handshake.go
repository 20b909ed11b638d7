package bridge

import (
	"errors"
	"fmt"
	"io"

	"github.com/tdsbridge/tdsbridge/tds"
)

// hsSocketReader is the socket as the handshake's tds.Reader sees it: it
// counts the bytes read so that a timeout before the first byte of a
// message can be told from one in the middle of it. Used under rmu.
type hsSocketReader struct{ c *Conn }

func (r hsSocketReader) Read(p []byte) (int, error) {
	n, err := r.c.raw.Read(p)
	r.c.hsRead += int64(n)
	return n, err
}

// hsSocketWriter is the socket as the handshake's tds.Writer sees it; it
// counts the bytes written. Used under wmu.
type hsSocketWriter struct{ c *Conn }

func (w hsSocketWriter) Write(p []byte) (int, error) {
	n, err := w.c.raw.Write(p)
	w.c.hsWritten += int64(n)
	return n, err
}

// readPhase names the handshake read in errors.
func (c *Conn) readPhase() string {
	if c.role == RoleClient {
		return "bridge: handshake: read PRELOGIN reply"
	}
	return "bridge: handshake: read PRELOGIN request"
}

// readHandshake serves the unread payload of the peer's current message;
// when there is none it sends the buffered flight and reads the peer's
// next message (a message with an empty payload is skipped). Called with
// rmu held.
func (c *Conn) readHandshake(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(c.hsPayload) == 0 {
		c.wmu.Lock()
		err := c.flushLocked()
		c.wmu.Unlock()
		if err != nil {
			return 0, err
		}
		before := c.hsRead
		_, payload, err := c.hsIn.ReadMessage()
		if err != nil {
			return 0, c.handshakeError(c.readPhase(), err, c.hsRead == before)
		}
		c.hsMessages++
		c.hsPayload = payload
	}
	n := copy(p, c.hsPayload)
	c.hsPayload = c.hsPayload[n:]
	return n, nil
}

// SendPending sends the flight the TLS layer wrote since it last read, if any, as one PRELOGIN
// message, and does nothing outside handshake mode. Call it when the handshake failed: the
// last flight is then the alert that tells the peer why. Write sends an alert record at once by
// itself, but a TLS 1.3 alert after ServerHello is encrypted, its record typed as application
// data, and cannot be told from the other records of a flight.
func (c *Conn) SendPending() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.State() != StateHandshake {
		return nil
	}
	return c.flushLocked()
}

// flushLocked sends the buffered flight, if any, as one PRELOGIN message
// (packets of at most 4096 bytes, EOM on the last). Called with wmu held.
func (c *Conn) flushLocked() error {
	if len(c.flight) == 0 {
		return nil
	}
	before := c.hsWritten
	if err := c.hsOut.WriteMessage(tds.TypePrelogin, c.flight); err != nil {
		return c.handshakeError("bridge: handshake: send PRELOGIN flight", err, c.hsWritten == before)
	}
	c.flight = c.flight[:0]
	c.hsFlights++
	return nil
}

// handshakeError turns err from the socket or the framing into the error
// to return. A timeout that happened before any byte of the message was
// moved (clean) is returned as a temporary error and leaves the Conn in
// handshake mode; every other error fails the Conn, wrapped with phase.
// The peer closing the connection is reported as io.ErrUnexpectedEOF.
func (c *Conn) handshakeError(phase string, err error, clean bool) error {
	if c.State() == StateClosed {
		return errClosed
	}
	if clean && isTimeout(err) {
		return &tempError{msg: phase, err: err}
	}
	if errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return c.fail(fmt.Errorf("%s: peer closed the connection: %w", phase, io.ErrUnexpectedEOF))
	}
	return c.fail(fmt.Errorf("%s: %w", phase, err))
}

// leaveHandshake ends handshake mode on the way to state to: it checks
// that the handshake is complete (or, for plaintext, that none ran), sends
// the flight the TLS layer wrote last without reading (e.g. the client
// Finished of TLS 1.3 or of a resumed TLS 1.2 session, the final flight of
// a TLS 1.2 server) as a PRELOGIN message, except a server's TLS 1.3
// post-handshake records, which go out raw, and moves the
// unread rest of the peer's last message into the read-ahead buffer, where
// it is served before anything from the socket. Called with rmu and wmu
// held.
func (c *Conn) leaveHandshake(to State, name string) error {
	sent := c.hsFlights > 0 || len(c.flight) > 0
	received := c.hsMessages > 0
	if to == StatePassthrough && !(sent && received) || sent != received {
		return fmt.Errorf("bridge: %s: %d flights sent, %d messages received: %w",
			name, c.hsFlights, c.hsMessages, ErrHandshakeIncomplete)
	}
	if c.role == RoleServer && len(c.flight) > 0 && c.flight[0] == recordTypeApplicationData {
		// A TLS 1.3 server that sends its session tickets only after the
		// client's Finished (crypto/tls does so when it asked for a client
		// certificate) writes them after its handshake ended, when the
		// client has switched already: they are post-handshake records
		// and go out raw. No TLS 1.2 server flight starts with an
		// application-data record.
		if _, err := c.raw.Write(c.flight); err != nil {
			return c.handshakeError("bridge: "+name+": send post-handshake records", err, false)
		}
		c.flight = c.flight[:0]
	}
	if err := c.flushLocked(); err != nil {
		return err
	}
	c.ra.init(c.pool, c.hsPayload)
	c.hsPayload, c.hsIn, c.hsOut, c.flight = nil, nil, nil, nil
	return nil
}

// recordTypeAlert is the content type of a TLS alert record (RFC 8446 5.1, RFC 5246 6.2.1).
const recordTypeAlert = 0x15

// hasAlert reports whether p, whole TLS records as the TLS layer writes them, holds an alert
// record. It stops at the first header it cannot follow.
func hasAlert(p []byte) bool {
	for len(p) >= recordHeaderLen {
		if p[0] == recordTypeAlert {
			return true
		}
		p = p[min(len(p), recordHeaderLen+(int(p[3])<<8|int(p[4]))):]
	}
	return false
}
