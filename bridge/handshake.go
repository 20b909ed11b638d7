package bridge

import (
	"errors"
	"fmt"
	"io"

	"github.com/tdsbridge/tdsbridge/tds"
)

// hsSocketReader is the socket under the handshake's tds.Reader, counting hsRead. Used under rmu.
type hsSocketReader struct{ c *Conn }

func (r hsSocketReader) Read(p []byte) (int, error) {
	n, err := r.c.raw.Read(p)
	r.c.hsRead += int64(n)
	return n, err
}

// hsSocketWriter is hsSocketReader for the tds.Writer (hsWritten). Used under wmu.
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

// readHandshake serves the unread payload of the peer's current message; when there is none it
// sends the flight and reads the next message, skipping empty ones. Called with rmu held.
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
// message; outside handshake mode it does nothing. Call it when the handshake failed, so that the
// peer gets the alert: Write sends a plain alert at once, but a TLS 1.3 alert after ServerHello
// is encrypted, typed as application data, and looks like any other record of a flight.
func (c *Conn) SendPending() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.State() != StateHandshake {
		return nil
	}
	return c.flushLocked()
}

// flushLocked sends the flight, if any, as one PRELOGIN message. Called with wmu held.
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

// handshakeError turns err from the socket or the framing into the error to return: a timeout
// before any byte of the message moved (clean) leaves the Conn in handshake mode; anything else
// fails it, wrapped with phase, the peer's close as io.ErrUnexpectedEOF.
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

// leaveHandshake ends handshake mode on the way to state to: it checks that the handshake is
// complete (for plaintext: or that none ran), sends the last flight (see StartPassthrough) and
// seeds the read-ahead with the rest of the peer's last message. Called with rmu and wmu held.
func (c *Conn) leaveHandshake(to State, name string) error {
	sent := c.hsFlights > 0 || len(c.flight) > 0
	received := c.hsMessages > 0
	if to == StatePassthrough && !(sent && received) || sent != received {
		return fmt.Errorf("bridge: %s: %d flights sent, %d messages received: %w",
			name, c.hsFlights, c.hsMessages, ErrHandshakeIncomplete)
	}
	if c.role == RoleServer && len(c.flight) > 0 && c.flight[0] == recordTypeApplicationData {
		// A TLS 1.3 server that asked for a client certificate sends its session tickets
		// after the client's Finished, when the client has switched already: they go out
		// raw. No TLS 1.2 server flight starts with an application-data record.
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

// recordTypeAlert is the content type of a TLS alert (RFC 8446 5.1, RFC 5246 6.2.1).
const recordTypeAlert = 0x15

// hasAlert reports whether p, whole records as the TLS layer writes them, holds an alert record;
// it stops at the first header it cannot follow.
func hasAlert(p []byte) bool {
	for len(p) >= recordHeaderLen {
		if p[0] == recordTypeAlert {
			return true
		}
		p = p[min(len(p), recordHeaderLen+(int(p[3])<<8|int(p[4]))):]
	}
	return false
}
