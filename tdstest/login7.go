package tdstest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"

	"github.com/tdsbridge/tdsbridge/internal/login7pw"
)

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

// LOGIN7 layout (MS-TDS 2.2.6.4): a 36-byte fixed part, then the OffsetLength table (58 bytes
// for TDS 7.2 and later), then the variable data the table points into.
const (
	login7HeaderLen  = 94 // fixed part + OffsetLength table
	login7HeaderLen7 = 86 // the same for TDS 7.0 and 7.1 (no ChangePassword, no cbSSPILong)
	login7MaxNameLen = 128
	login7MaxPwdLen  = 128

	optFlags3Extension = 0x10
	featureExtTerm     = 0xFF
)

// errLogin7 is the sentinel every LOGIN7 parse error wraps.
var errLogin7 = errors.New("tdstest: malformed LOGIN7")

// login7 is the part of a LOGIN7 message the server uses. Strings are decoded copies: the
// struct keeps no reference to the message bytes.
type login7 struct {
	TDSVersion    uint32 // as the client sent it (for example 0x74000004)
	PacketSize    uint32 // requested packet size; 0 asks for the server's default
	ClientProgVer uint32
	ClientPID     uint32
	OptionFlags1  uint8
	OptionFlags2  uint8
	TypeFlags     uint8
	OptionFlags3  uint8
	HostName      string
	UserName      string
	Password      string // de-obfuscated
	AppName       string
	ServerName    string
	CtlIntName    string // client interface library name
	Language      string
	Database      string
	SSPILen       int           // bytes of SSPI data (integrated authentication)
	FeatureExt    bool          // a FeatureExt block was present and well formed
	FedAuth       *fedAuthLogin // the FEDAUTH feature; nil when absent
}

// supportedTDSVersion reports whether the server can talk the version a LOGIN7 asks for.
func supportedTDSVersion(v uint32) bool {
	switch v >> 24 {
	case 0x70, 0x71, 0x72, 0x73, 0x74:
		return true
	}
	return v == verTDS80
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

// parseLogin7 decodes and validates a whole LOGIN7 message payload. Every offset and length is
// checked against the message; errors wrap errLogin7 and say which field is wrong.
func parseLogin7(b []byte) (*login7, error) {
	le := binary.LittleEndian
	header := login7HeaderLen
	if len(b) >= 8 && isLegacyTDS(le.Uint32(b[4:])) {
		header = login7HeaderLen7
	}
	if len(b) < header {
		return nil, fmt.Errorf("%w: %d bytes, want at least %d", errLogin7, len(b), header)
	}
	total := le.Uint32(b[0:])
	if total < uint32(header) || uint64(total) > uint64(len(b)) {
		return nil, fmt.Errorf("%w: Length field %d, message has %d bytes", errLogin7, total, len(b))
	}
	b = b[:total]
	l := &login7{
		TDSVersion:    le.Uint32(b[4:]),
		PacketSize:    le.Uint32(b[8:]),
		ClientProgVer: le.Uint32(b[12:]),
		ClientPID:     le.Uint32(b[16:]),
		OptionFlags1:  b[24],
		OptionFlags2:  b[25],
		TypeFlags:     b[26],
		OptionFlags3:  b[27],
	}
	if !supportedTDSVersion(l.TDSVersion) {
		return nil, fmt.Errorf("%w: unsupported TDS version %#08x (want 7.0, 7.1, 7.2, 7.3, 7.4 or 8.0)", errLogin7, l.TDSVersion)
	}
	type field struct {
		name string
		pos  int     // position of the (offset, count) pair
		max  int     // maximum characters
		dst  *string // decoded value
		pwd  bool
	}
	fields := []field{
		{"HostName", 36, login7MaxNameLen, &l.HostName, false},
		{"UserName", 40, login7MaxNameLen, &l.UserName, false},
		{"Password", 44, login7MaxPwdLen, &l.Password, true},
		{"AppName", 48, login7MaxNameLen, &l.AppName, false},
		{"ServerName", 52, login7MaxNameLen, &l.ServerName, false},
		{"CltIntName", 60, login7MaxNameLen, &l.CtlIntName, false},
		{"Language", 64, login7MaxNameLen, &l.Language, false},
		{"Database", 68, login7MaxNameLen, &l.Database, false},
	}
	for _, f := range fields {
		off, cch := int(le.Uint16(b[f.pos:])), int(le.Uint16(b[f.pos+2:]))
		if cch > f.max {
			return nil, fmt.Errorf("%w: %s has %d characters, at most %d allowed", errLogin7, f.name, cch, f.max)
		}
		raw, err := login7Slice(b, f.name, off, 2*cch)
		if err != nil {
			return nil, err
		}
		if f.pwd {
			*f.dst = decodeUCS2(login7pw.Deobfuscate(raw))
		} else {
			*f.dst = decodeUCS2(raw)
		}
	}
	// AtchDBFile and ChangePassword (TDS 7.2+) are checked for bounds only.
	legacy := isLegacyTDS(l.TDSVersion)
	bounded := []struct {
		name string
		pos  int
	}{{"AtchDBFile", 82}, {"ChangePassword", 86}}
	if legacy {
		bounded = bounded[:1]
	}
	for _, p := range bounded {
		off, cch := int(le.Uint16(b[p.pos:])), int(le.Uint16(b[p.pos+2:]))
		if _, err := login7Slice(b, p.name, off, 2*cch); err != nil {
			return nil, err
		}
	}
	sspiOff, sspiLen := int(le.Uint16(b[78:])), int(le.Uint16(b[80:]))
	if sspiLen == 0xFFFF && !legacy {
		long := le.Uint32(b[90:])
		if uint64(long) > uint64(len(b)) {
			return nil, fmt.Errorf("%w: cbSSPILong %d exceeds the message", errLogin7, long)
		}
		sspiLen = int(long)
	}
	if _, err := login7Slice(b, "SSPI", sspiOff, sspiLen); err != nil {
		return nil, err
	}
	l.SSPILen = sspiLen
	if l.OptionFlags3&optFlags3Extension != 0 && !legacy {
		if err := checkFeatureExt(b); err != nil {
			return nil, err
		}
		l.FeatureExt = true
		fa, err := parseFedAuthFeature(b)
		if err != nil {
			return nil, err
		}
		l.FedAuth = fa
	} else {
		off, n := int(le.Uint16(b[56:])), int(le.Uint16(b[58:]))
		if _, err := login7Slice(b, "Unused", off, n); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// login7Slice returns b[off:off+n] after checking that a non-empty field lies in the variable
// part of the message.
func login7Slice(b []byte, name string, off, n int) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	header := login7HeaderLen
	if isLegacyTDS(binary.LittleEndian.Uint32(b[4:])) {
		header = login7HeaderLen7
	}
	if off < header || off+n > len(b) {
		return nil, fmt.Errorf("%w: %s at offset %d length %d lies outside the variable data [%d, %d)",
			errLogin7, name, off, n, header, len(b))
	}
	return b[off : off+n], nil
}

// checkFeatureExt validates the FeatureExt block: ibExtension points at a 4-byte offset of a list
// of (FeatureId u8, FeatureDataLen u32 LE, data) entries ended by 0xFF.
func checkFeatureExt(b []byte) error {
	le := binary.LittleEndian
	off, n := int(le.Uint16(b[56:])), int(le.Uint16(b[58:]))
	if n < 4 {
		return fmt.Errorf("%w: fExtension set but cbExtension is %d (want 4)", errLogin7, n)
	}
	ptr, err := login7Slice(b, "Extension", off, 4)
	if err != nil {
		return err
	}
	pos := uint64(le.Uint32(ptr))
	if pos < login7HeaderLen || pos >= uint64(len(b)) {
		return fmt.Errorf("%w: FeatureExt offset %d outside the message (%d bytes)", errLogin7, pos, len(b))
	}
	p := int(pos)
	for {
		if p >= len(b) {
			return fmt.Errorf("%w: FeatureExt not terminated by 0xFF", errLogin7)
		}
		if b[p] == featureExtTerm {
			return nil
		}
		if p+5 > len(b) {
			return fmt.Errorf("%w: FeatureExt entry 0x%02x at %d truncated", errLogin7, b[p], p)
		}
		dl := uint64(le.Uint32(b[p+1:]))
		if uint64(p+5)+dl > uint64(len(b)) {
			return fmt.Errorf("%w: FeatureExt entry 0x%02x at %d has %d data bytes, message ends at %d",
				errLogin7, b[p], p, dl, len(b))
		}
		p += 5 + int(dl)
	}
}

// decodeUCS2 decodes UTF-16LE bytes (an even number) into a string; unpaired surrogates become
// U+FFFD.
func decodeUCS2(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// appendUCS2 appends s in UTF-16LE.
func appendUCS2(dst []byte, s string) []byte {
	for _, r := range s {
		if r1, r2 := utf16.EncodeRune(r); r1 != '\uFFFD' || r2 != '\uFFFD' {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(r1))
			dst = binary.LittleEndian.AppendUint16(dst, uint16(r2))
			continue
		}
		dst = binary.LittleEndian.AppendUint16(dst, uint16(r))
	}
	return dst
}

// ucs2Len is the number of UTF-16 code units of s.
func ucs2Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
