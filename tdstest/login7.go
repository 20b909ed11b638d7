package tdstest

import l7 "github.com/tdsbridge/tdsbridge/login7"

// TDS versions as they appear in LOGIN7 (read little-endian) and LOGINACK (written big-endian).
const (
	verTDS70  uint32 = 0x70000000 // LOGIN7; LOGINACK 0x07000000
	verTDS71  uint32 = 0x71000000 // LOGIN7; LOGINACK 0x07010000
	verTDS71A uint32 = 0x71000001 // TDS 7.1 revision 1, LOGIN7 and LOGINACK
	verTDS72  uint32 = 0x72090002
	verTDS73A uint32 = 0x730A0003
	verTDS73B uint32 = 0x730B0003
	verTDS74  uint32 = 0x74000004
	verTDS80  uint32 = 0x08000000
)

// errLogin7 is the sentinel every LOGIN7 parse error wraps.
var errLogin7 = l7.ErrMalformed

// login7 is the part of a LOGIN7 message the server uses: the decoded message, whose strings
// are copies (it keeps no reference to the message bytes).
type login7 struct {
	l7.Message
	SSPILen    int    // len(SSPI): bytes of SSPI data (integrated authentication)
	CtlIntName string // CltIntName, the client interface library's name
}

// isLegacyTDS reports whether v (a LOGIN7 version) is TDS 7.0 or 7.1, whose tokens have the
// shorter fields of before TDS 7.2 and whose requests carry no ALL_HEADERS.
func isLegacyTDS(v uint32) bool { return v>>24 == 0x70 || v>>24 == 0x71 }

// loginAckVersion is the TDS version the server reports in LOGINACK for a client's version: the
// values of MS-TDS 2.2.7.14 (its product behavior note lists them per SQL Server version).
func loginAckVersion(client uint32) uint32 {
	switch {
	case client>>24 == 0x70:
		return 0x07000000
	case client == verTDS71A:
		return verTDS71A
	case client>>24 == 0x71:
		return 0x07010000
	}
	switch client {
	case verTDS72, verTDS73A, verTDS73B:
		return client
	}
	return verTDS74 // 7.4, and what SQL Server answers to TDS 8.0 logins
}

// parseLogin7 decodes and validates a whole LOGIN7 message payload (see login7.Message.Decode,
// the server's reading); errors wrap errLogin7 and say which field is wrong and where.
func parseLogin7(b []byte) (*login7, error) {
	var m l7.Message
	if err := m.Decode(b); err != nil {
		return nil, err
	}
	return &login7{Message: m, SSPILen: len(m.SSPI), CtlIntName: m.CltIntName}, nil
}
