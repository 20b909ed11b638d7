package login7

import "strconv"

// Sizes of a LOGIN7 message (MS-TDS 2.2.6.4).
const (
	// FixedLen is the length of the fixed part (the fixed fields and the OffsetLength table)
	// from TDS 7.2 on; the variable data starts after it.
	FixedLen = 94
	// FixedLen71 is the fixed part of TDS 7.0 and 7.1, which lack ibChangePassword,
	// cchChangePassword and cbSSPILong.
	FixedLen71 = 86
	// MaxLen is the longest LOGIN7 message: 128 KiB.
	MaxLen = 128 << 10
)

// Byte offsets of the fixed fields, from the start of the message. Integers are
// little-endian. The OffsetLength table lies between OffClientLCID and OffClientID and after
// OffClientID; see [Field.EntryAt].
const (
	OffLength         = 0  // u32: the message's length
	OffTDSVersion     = 4  // u32: for example 0x74000004 for TDS 7.4
	OffPacketSize     = 8  // u32: the packet size the client asks for
	OffClientProgVer  = 12 // u32
	OffClientPID      = 16 // u32
	OffConnectionID   = 20 // u32
	OffOptionFlags1   = 24 // u8
	OffOptionFlags2   = 25 // u8
	OffTypeFlags      = 26 // u8
	OffOptionFlags3   = 27 // u8: FlagExtension and others
	OffClientTimeZone = 28 // i32
	OffClientLCID     = 32 // u32
	OffClientID       = 72 // 6 bytes: the client's MAC address
	OffSSPILong       = 90 // u32: cbSSPILong, the SSPI length when cbSSPI is 0xFFFF (TDS 7.2+)
)

// FlagExtension is fExtension in OptionFlags3: ibExtension points at the offset of a
// FeatureExt block (TDS 7.4; read from TDS 7.2 on, see the package documentation).
const FlagExtension = 0x10

// FeatureExt (MS-TDS 2.2.6.4): a list of (FeatureId u8, FeatureDataLen u32, FeatureData)
// entries ended by FeatureTerminator.
const (
	FeatureFedAuth    = 0x02 // FEDAUTH; see [FedAuth]
	FeatureTerminator = 0xFF
)

// Field is a variable field of LOGIN7: one entry of the OffsetLength table, an offset (ib,
// u16) from the start of the message and a length (u16) in characters for strings, in bytes
// for the others.
type Field uint8

// The variable fields, in the order of the OffsetLength table.
const (
	FieldHostName Field = iota
	FieldUserName
	FieldPassword // obfuscated (see internal/login7pw)
	FieldAppName
	FieldServerName
	FieldExtension // ibExtension/cbExtension: the 4-byte offset of FeatureExt; "Unused" without FlagExtension
	FieldCltIntName
	FieldLanguage
	FieldDatabase
	FieldSSPI
	FieldAtchDBFile
	FieldChangePassword // TDS 7.2+; obfuscated like the password
)

// fieldInfo describes a Field; fields is indexed by Field.
type fieldInfo struct {
	name      string
	at        int  // offset of the field's entry (ib, then the length) in the fixed part
	ucs2      bool // a UCS-2 string whose length counts characters (2 bytes each); else bytes
	maxChars  int  // the most characters MS-TDS allows; 0: no limit of its own
	since72   bool // absent before TDS 7.2
	obfuscate bool // stored obfuscated (password and new password)
}

var fields = [...]fieldInfo{
	FieldHostName:       {name: "HostName", at: 36, ucs2: true, maxChars: 128},
	FieldUserName:       {name: "UserName", at: 40, ucs2: true, maxChars: 128},
	FieldPassword:       {name: "Password", at: 44, ucs2: true, maxChars: 128, obfuscate: true},
	FieldAppName:        {name: "AppName", at: 48, ucs2: true, maxChars: 128},
	FieldServerName:     {name: "ServerName", at: 52, ucs2: true, maxChars: 128},
	FieldExtension:      {name: "Extension", at: 56},
	FieldCltIntName:     {name: "CltIntName", at: 60, ucs2: true, maxChars: 128},
	FieldLanguage:       {name: "Language", at: 64, ucs2: true, maxChars: 128},
	FieldDatabase:       {name: "Database", at: 68, ucs2: true, maxChars: 128},
	FieldSSPI:           {name: "SSPI", at: 78},
	FieldAtchDBFile:     {name: "AtchDBFile", at: 82, ucs2: true, maxChars: 260},
	FieldChangePassword: {name: "ChangePassword", at: 86, ucs2: true, maxChars: 128, since72: true, obfuscate: true},
}

const numFields = len(fields)

// String returns the field's name in MS-TDS (without the ib/cch prefix).
func (f Field) String() string {
	if int(f) < numFields {
		return fields[f].name
	}
	return "Field(" + strconv.Itoa(int(f)) + ")"
}

// EntryAt returns the offset of f's OffsetLength entry in the fixed part: ib (u16) at
// EntryAt, its length (u16) at EntryAt+2.
func (f Field) EntryAt() int { return fields[f].at }

// MaxChars returns the most characters MS-TDS allows in f, or 0 when f is not a string.
func (f Field) MaxChars() int { return fields[f].maxChars }

// Span is where something lies in a message: bytes [Start, End) from the start of the
// message (the payload of the LOGIN7 packets, without their headers).
type Span struct{ Start, End int }

// Len returns the span's length in bytes.
func (s Span) Len() int { return s.End - s.Start }

// fixedLen returns the length of the fixed part for a TDSVersion, and whether the version is
// one this package knows the layout of (7.0 to 7.4, and 8.0).
func fixedLen(version uint32) (n int, known bool) {
	switch version >> 24 {
	case 0x70, 0x71:
		return FixedLen71, true
	case 0x72, 0x73, 0x74:
		return FixedLen, true
	}
	return FixedLen, version == 0x08000000
}
