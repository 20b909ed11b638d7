package prelogin

import (
	"bytes"
	"strconv"
)

// Version is the VERSION option: for a client the version of its driver, for a server the
// version of the server (SQL Server 2008 SP2 sends 10.0.4000.0). On the wire: Major, Minor,
// Build (u16 big-endian), SubBuild (u16 big-endian). Drivers fill these bytes in different ways
// (go-mssqldb writes its own version little-endian); the fields always reproduce the bytes.
type Version struct {
	Major    uint8
	Minor    uint8
	Build    uint16
	SubBuild uint16
}

// String returns "Major.Minor.Build.SubBuild", for example "10.0.4000.0".
func (v Version) String() string {
	return strconv.Itoa(int(v.Major)) + "." + strconv.Itoa(int(v.Minor)) + "." +
		strconv.Itoa(int(v.Build)) + "." + strconv.Itoa(int(v.SubBuild))
}

// TraceID is the TRACEID option a client sends: connection GUID, activity GUID and activity
// sequence number (u32 little-endian, as MS-TDS ULONGs are). The GUIDs are kept as raw bytes.
type TraceID struct {
	Connection [16]byte
	Activity   [16]byte
	Sequence   uint32
}

// Option is a PRELOGIN option this package does not know (a token neither [Token.Known] nor
// the terminator), kept as raw bytes so that it survives a decode-encode round trip.
type Option struct {
	Token Token
	Data  []byte
}

// Message is a decoded PRELOGIN payload.
//
// Each option has a typed field and a presence flag (HasX); a field is meaningful only when its
// flag is set, and Encode writes exactly the options whose flag is set, plus Unknown. A Message
// remembers the table order it was decoded from (VERSION always first); Encode writes options in
// that order, then any other present options in token order, then the remaining Unknown options
// in slice order. The zero Message is empty and ready to use; a hand-built Message therefore
// encodes in token order, which is the order go-mssqldb and SQL Server use.
//
// Decode reuses the Message's storage: Instance and the Data of Unknown options point into a
// buffer owned by the Message and stay valid until the next Decode or Reset on it, and the
// backing array of Unknown is reused. A Message must not be used by several goroutines at once.
type Message struct {
	Version    Version
	HasVersion bool

	Encryption    Encryption
	HasEncryption bool

	// Instance is the INSTOPT data as sent: a client sends the instance name followed by a NUL
	// byte (a single NUL for the default instance), a server one byte (0x00: the name matched).
	// InstanceName returns the name without the NUL.
	Instance    []byte
	HasInstance bool

	// ThreadID is the client's thread id (THREADID, u32 little-endian). A server sends THREADID
	// with no data: HasThreadID and ThreadIDEmpty are then both set and ThreadID is 0.
	ThreadID      uint32
	HasThreadID   bool
	ThreadIDEmpty bool

	// MARS is the MARS byte: 0x00 off, 0x01 on (other values are kept as they came).
	MARS    uint8
	HasMARS bool

	TraceID    TraceID
	HasTraceID bool

	// FedAuthRequired is the FEDAUTHREQUIRED byte: client 0x01 = supports federated
	// authentication; server 0x01 = requires it.
	FedAuthRequired    uint8
	HasFedAuthRequired bool

	// Nonce is the NONCEOPT data.
	Nonce    [NonceSize]byte
	HasNonce bool

	// Unknown holds options with tokens this package does not know, in table order. Their
	// tokens must be distinct, unknown ([Token.Known] false) and not the terminator (Encode
	// checks).
	Unknown []Option

	order []Token // table order as decoded or set by SetOrder; reused
	buf   []byte  // storage for Instance and Unknown data after Decode; reused
}

// Reset empties m and keeps its storage for reuse: it clears the elements of Unknown's backing
// array and truncates it. Slices previously returned in Instance or Unknown[i].Data by Decode
// must no longer be used.
func (m *Message) Reset() {
	clear(m.Unknown[:cap(m.Unknown)]) // drop references to old data
	*m = Message{order: m.order[:0], buf: m.buf[:0], Unknown: m.Unknown[:0]}
}

// Has reports whether option t is present: its HasX flag for a known token, an entry in Unknown
// for any other token. Has(TokenTerminator) is false.
func (m *Message) Has(t Token) bool {
	if t.Known() {
		var b optionBuf
		_, ok, _ := m.optionData(t, &b)
		return ok
	}
	return t != TokenTerminator && m.unknownIndex(t) >= 0
}

// unknownIndex returns the index in m.Unknown of the first option with token t, or -1.
func (m *Message) unknownIndex(t Token) int {
	for i := range m.Unknown {
		if m.Unknown[i].Token == t {
			return i
		}
	}
	return -1
}

// InstanceName returns the INSTOPT data up to its first NUL byte, as a string.
func (m *Message) InstanceName() string {
	if i := bytes.IndexByte(m.Instance, 0); i >= 0 {
		return string(m.Instance[:i])
	}
	return string(m.Instance)
}

// SetOrder sets the order in which Encode writes the options listed (VERSION is always
// written first). Tokens of absent options are skipped when encoding; present options not listed
// follow in token order, then the remaining Unknown options. SetOrder copies order.
func (m *Message) SetOrder(order []Token) {
	m.order = append(m.order[:0], order...)
}

// Tokens appends to dst the tokens of the options Encode would write, in the order it would
// write them, and returns the extended slice. It returns dst unchanged and an error if Encode
// would fail on m's Unknown options.
func (m *Message) Tokens(dst []Token) ([]Token, error) {
	var seq sequence
	k, err := m.sequence(&seq)
	if err != nil {
		return dst, err
	}
	for _, s := range seq[:k] {
		dst = append(dst, m.seqToken(s))
	}
	return dst, nil
}

// Equal reports whether m and o hold the same options with the same values, in the same
// encoding order: whether they encode to the same bytes. Fields of absent options, and the
// storage they live in, are not compared. A Message that Encode rejects is equal to nothing.
func (m *Message) Equal(o *Message) bool {
	var s1, s2 sequence
	k1, err1 := m.sequence(&s1)
	k2, err2 := o.sequence(&s2)
	if err1 != nil || err2 != nil || k1 != k2 {
		return false
	}
	if _, err := m.size(&s1, k1); err != nil {
		return false
	}
	if _, err := o.size(&s2, k2); err != nil {
		return false
	}
	var b1, b2 optionBuf
	for i := range k1 {
		if m.seqToken(s1[i]) != o.seqToken(s2[i]) || !bytes.Equal(m.seqData(s1[i], &b1), o.seqData(s2[i], &b2)) {
			return false
		}
	}
	return true
}

// String describes m for logs, options in encoding order, for example
// "VERSION=10.0.4000.0 ENCRYPTION=ON INSTOPT=00 THREADID=<empty> MARS=00". Byte data is shown in
// hex, at most 16 bytes of it per option.
func (m *Message) String() string {
	var seq sequence
	k, err := m.sequence(&seq)
	if err != nil {
		return "invalid Message: " + err.Error()
	}
	var b []byte
	for i, s := range seq[:k] {
		if i > 0 {
			b = append(b, ' ')
		}
		t := m.seqToken(s)
		b = append(b, t.String()...)
		b = append(b, '=')
		switch t {
		case TokenVersion:
			b = append(b, m.Version.String()...)
		case TokenEncryption:
			b = append(b, m.Encryption.String()...)
		case TokenThreadID:
			if m.ThreadIDEmpty {
				b = append(b, "<empty>"...)
			} else {
				b = strconv.AppendUint(b, uint64(m.ThreadID), 10)
			}
		default:
			var d optionBuf
			b = appendHex(b, m.seqData(s, &d))
		}
	}
	return string(b)
}

// appendHex appends d in hex, at most 16 bytes of it, then "..." if there is more; "<empty>" for
// no bytes.
func appendHex(b, d []byte) []byte {
	const digits = "0123456789abcdef"
	if len(d) == 0 {
		return append(b, "<empty>"...)
	}
	for i, c := range d {
		if i == 16 {
			return append(b, "..."...)
		}
		b = append(b, digits[c>>4], digits[c&15])
	}
	return b
}
