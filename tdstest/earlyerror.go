package tdstest

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/tdsbridge/tdsbridge/tds"
)

// The response of ActionEarlyError: how long the server takes before the first token, and how
// many packets of INFO messages follow the error.
const (
	earlyErrorDelay   = 60 * time.Millisecond
	earlyErrorPackets = 300
)

// earlyError answers the request just read as ActionEarlyError describes: ERROR and DONE with
// the error and more bits, INFO messages (PRINT's: number 0, class 0) until earlyErrorPackets
// packets are full, and the final DONE, all in one tabular result message. The message goes
// out in one Write, as a server that gathers a response does, so that the client finds much of
// it already arrived, read ahead, when go-mssqldb returns the error.
func (c *conn) earlyError() error {
	c.logf("early error: ERROR 50000 after %v, then INFO messages over %d packets", earlyErrorDelay, earlyErrorPackets)
	b := c.takeResetAck(nil)
	b = c.appendMessage(b, tokenError, serverMessage{Number: 50000, State: 1, Class: 16, Text: "tdstest: early error"})
	b = c.appendDone(b, doneError|doneMore, 0, 0)
	info := c.appendMessage(nil, tokenInfo, serverMessage{Number: 0, State: 1, Class: 0, Text: strings.Repeat("x", 500)})
	for total := earlyErrorPackets * (c.packetSize - tds.HeaderSize); len(b) < total; {
		b = append(b, info...)
	}
	b = c.appendDone(b, 0, 0, 0)
	var msg bytes.Buffer
	w := tds.NewWriter(&msg, c.packetSize)
	w.SetSPID(c.spid)
	if err := w.WriteMessage(tds.TypeTabularResult, b); err != nil {
		return fmt.Errorf("early error: %w", err)
	}
	time.Sleep(earlyErrorDelay)
	if _, err := c.sink.w.Write(msg.Bytes()); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return c.flush()
}
