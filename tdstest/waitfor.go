package tdstest

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/tdsbridge/tdsbridge/tds"
)

// errAttention ends a batch early: the client's ATTENTION arrived while a statement was running
// and its acknowledgement (DONE with the attention bit) has been written in place of the rest.
var errAttention = errors.New("tdstest: batch cancelled by attention")

// waitFor runs WAITFOR DELAY d: it waits for d while reading the connection for an ATTENTION,
// as SQL Server does while a batch runs. It reports whether an ATTENTION arrived. The wait uses a
// read deadline on the socket (not sticky in the bridge, crypto/tls or the tds.Reader when no
// byte of a message was consumed), cleared before it returns; Close ends it at once.
func (c *conn) waitFor(d time.Duration) (attention bool, err error) {
	// Whatever the response holds so far goes out first, as a server that is busy would have sent it.
	if err := c.flush(); err != nil {
		return false, err
	}
	if err := c.raw.SetReadDeadline(time.Now().Add(d)); err != nil {
		return false, fmt.Errorf("WAITFOR: %w", err)
	}
	defer func() { _ = c.raw.SetReadDeadline(time.Time{}) }()

	c.in.SetAllowed(tds.Types(tds.TypeAttention))
	_, _, err = c.in.ReadMessage()
	var ne net.Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ne) && ne.Timeout():
		return false, nil
	default:
		return false, fmt.Errorf("WAITFOR: read while waiting for ATTENTION: %w", err)
	}
}
