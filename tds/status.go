package tds

import "strings"

// Status is the second byte of a packet header: a set of bit flags.
type Status uint8

// Status bits (MS-TDS 2.2.3.1.2).
const (
	// StatusEOM marks the last packet of a message.
	StatusEOM Status = 0x01
	// StatusIgnore, set together with StatusEOM, tells the receiver to
	// ignore the message.
	StatusIgnore Status = 0x02
	// StatusResetConnection asks the server to reset the session before
	// processing the message; set on the first packet only.
	StatusResetConnection Status = 0x08
	// StatusResetConnectionSkipTran is StatusResetConnection that keeps the
	// transaction state; set on the first packet only.
	StatusResetConnectionSkipTran Status = 0x10
)

var statusNames = [...]struct {
	bit  Status
	name string
}{
	{StatusEOM, "EOM"},
	{StatusIgnore, "IGNORE"},
	{StatusResetConnection, "RESETCONNECTION"},
	{StatusResetConnectionSkipTran, "RESETCONNECTIONSKIPTRAN"},
}

// String returns the set bits joined by "|", for example "EOM|IGNORE";
// bits without a name are shown in hex ("EOM|0x40"), and no bit at all is
// "0".
func (s Status) String() string {
	if s == 0 {
		return "0"
	}
	var b strings.Builder
	rest := s
	for _, n := range statusNames {
		if s&n.bit == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		b.WriteString(n.name)
		rest &^= n.bit
	}
	if rest != 0 {
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		b.WriteString(hexByte(uint8(rest)))
	}
	return b.String()
}
