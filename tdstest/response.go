package tdstest

import (
	"errors"
	"fmt"

	"github.com/tdsbridge/tdsbridge/tds"
)

// envResetConnAck is the ENVCHANGE type that acknowledges RESETCONNECTION.
const envResetConnAck = 18

// resetSession handles the RESETCONNECTION bit of a request: the session goes back to its state
// after login (session.reset), a pending INSERT BULK is forgotten, and the response starts with
// ENVCHANGE 18.
func (c *conn) resetSession() {
	c.session.reset()
	c.bulk = nil
	c.resetAck = true
}

// takeResetAck appends the pending RESETCONNECTION acknowledgement, if any.
func (c *conn) takeResetAck(b []byte) []byte {
	if !c.resetAck {
		return b
	}
	c.resetAck = false
	return append(b, tokenEnvChange, 3, 0, envResetConnAck, 0, 0)
}

// queryFault applies the fault configured for PhaseQuery to the request just read: a close,
// reset or stall ends the connection (done, with the *faultError), an error fault refuses the
// request (done, with what refuse returned), a mutation is armed to strike on the response's
// first packet.
func (c *conn) queryFault() (done bool, err error) {
	a, err := c.fault(PhaseQuery)
	switch {
	case err != nil:
		return true, err
	case a == ActionError:
		return true, c.refuse("tdstest: fault injected at query")
	case a == ActionEarlyError:
		return true, c.earlyError()
	case a.isMutation():
		c.sink.arm(PhaseQuery, a, 0)
	}
	return false, nil
}

// resultFault applies the fault configured for PhaseResult to the response about to be written:
// an error fault refuses the request (refused is true; err is what refuse returned), a close,
// reset, stall or mutation is armed to strike after the first packet of the response.
func (c *conn) resultFault() (refused bool, err error) {
	ra, ferr := c.fault(PhaseResult)
	switch {
	case ferr != nil, ra.isMutation():
		c.sink.arm(PhaseResult, ra, 1)
	case ra == ActionError:
		return true, c.refuse("tdstest: fault injected in the result")
	}
	return false, nil
}

// DONE CurCmd values.
const (
	curCmdSelect = 0xC1
	curCmdSet    = 0xBE
)

// batch answers one SQL batch: every statement's tokens in one tabular result message, streamed
// through the packet writer. A batch the recognizer refuses gets ERROR 50000 and a DONE with the
// error bit, and the connection stays usable.
func (c *conn) batch(text string) error {
	if done, err := c.queryFault(); done {
		return err
	}
	stmts, perr := parseBatch(text)
	if perr == nil {
		if refused, err := c.resultFault(); refused {
			return err
		}
	}
	c.out.BeginMessage(tds.TypeTabularResult, 0)
	b := c.takeResetAck(c.scratch[:0])
	if perr != nil {
		c.logf("refused batch %q: %v", shorten(text), perr)
		b = c.appendRefusal(b, perr)
		b = c.appendDone(b, doneError, 0, 0)
	}
	if _, err := c.out.Write(b); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	if perr == nil {
		if _, err := c.runStatements(stmts); err != nil {
			return fmt.Errorf("write response: %w", err)
		}
	}
	if err := c.out.EndMessage(); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	c.sink.disarm()
	return c.flush()
}

// errorMessage is the ERROR token content for a refused request: SQL Server's number for a
// *sqlError, 50000 otherwise.
func errorMessage(err error) serverMessage {
	var se *sqlError
	if errors.As(err, &se) {
		return serverMessage{Number: se.Number, State: se.State, Class: se.Class, Text: se.Msg}
	}
	return serverMessage{Number: 50000, State: 1, Class: 16, Text: err.Error()}
}

// shorten cuts a batch for the log.
func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
