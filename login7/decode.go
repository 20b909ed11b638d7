package login7

import (
	"bytes"

	"github.com/tdsbridge/tdsbridge/internal/login7pw"
	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// Message is a LOGIN7 message's values (MS-TDS 2.2.6.4): what [Message.Decode] reads and
// [Message.Encode] writes.
type Message struct {
	TDSVersion     uint32 // for example 0x74000004 (TDS 7.4)
	PacketSize     uint32 // the packet size the client asks for; 0: the server's default
	ClientProgVer  uint32
	ClientPID      uint32
	ConnectionID   uint32
	OptionFlags1   uint8
	OptionFlags2   uint8
	TypeFlags      uint8
	OptionFlags3   uint8 // Encode sets or clears FlagExtension from 7.2 on, by Features
	ClientTimeZone int32
	ClientLCID     uint32
	ClientID       [6]byte

	HostName       string
	UserName       string
	Password       string // in clear: Decode de-obfuscates it, Encode obfuscates it
	AppName        string
	ServerName     string
	CltIntName     string // the client library's name
	Language       string
	Database       string
	AtchDBFile     string
	ChangePassword string // the new password (TDS 7.2+), in clear like Password
	SSPI           []byte

	// Features are the FeatureExt entries in order (FEDAUTH included); nil when the message
	// has no FeatureExt block, which Encode then does not write.
	Features []Feature
	// FedAuth is the FEDAUTH feature decoded; nil when there is none. Decode sets it; Encode
	// ignores it and writes Features.
	FedAuth *FedAuth

	// Layout is where each part lay in the decoded message; Encode ignores it.
	Layout Layout
}

// Feature is one FeatureExt entry.
type Feature struct {
	ID   byte
	Data []byte
}

// Decode reads the LOGIN7 message src into m, replacing its contents: what [Parse] checks,
// then the server's checks of the values: no string longer than MS-TDS allows
// ([Field.MaxChars]) and at most one FEDAUTH feature, which must decode ([DecodeFedAuth]).
// Errors are *FormatError wrapping ErrMalformed; on error m is left zero. Decode does not
// retain src: strings, SSPI and feature data are copies.
func (m *Message) Decode(src []byte) error {
	*m = Message{}
	l, err := Parse(src)
	if err != nil {
		return err
	}
	v := Message{
		TDSVersion:     l.TDSVersion,
		PacketSize:     le.Uint32(src[OffPacketSize:]),
		ClientProgVer:  le.Uint32(src[OffClientProgVer:]),
		ClientPID:      le.Uint32(src[OffClientPID:]),
		ConnectionID:   le.Uint32(src[OffConnectionID:]),
		OptionFlags1:   src[OffOptionFlags1],
		OptionFlags2:   src[OffOptionFlags2],
		TypeFlags:      src[OffTypeFlags],
		OptionFlags3:   src[OffOptionFlags3],
		ClientTimeZone: int32(le.Uint32(src[OffClientTimeZone:])),
		ClientLCID:     le.Uint32(src[OffClientLCID:]),
	}
	if sp := l.spans[FieldSSPI]; sp.Len() > 0 {
		v.SSPI = bytes.Clone(src[sp.Start:sp.End])
	}
	copy(v.ClientID[:], src[OffClientID:])
	for f := range Field(numFields) {
		dst := v.str(f)
		if dst == nil {
			continue
		}
		sp, info := l.spans[f], &fields[f]
		if chars := sp.Len() / 2; chars > info.maxChars {
			return malformed(info.name, info.at, "has %d characters, at most %d allowed", chars, info.maxChars)
		}
		raw := src[sp.Start:sp.End]
		if info.obfuscate {
			raw = login7pw.Deobfuscate(raw)
		}
		*dst = ucs2.Decode(raw)
	}
	if l.Features != nil {
		v.Features = make([]Feature, 0, len(l.Features))
	}
	for _, fs := range l.Features {
		data := src[fs.Data.Start:fs.Data.End]
		v.Features = append(v.Features, Feature{ID: fs.ID, Data: bytes.Clone(data)})
		if fs.ID != FeatureFedAuth {
			continue
		}
		if v.FedAuth != nil {
			return malformed("FEDAUTH", fs.At, "feature at %d repeats the one before", fs.At)
		}
		fa, err := decodeFedAuth(data, fs.Data.Start)
		if err != nil {
			return err
		}
		v.FedAuth = &fa
	}
	v.Layout = l
	*m = v
	return nil
}

// str returns where the value of field f goes, or nil for the fields that are not strings.
func (m *Message) str(f Field) *string {
	switch f {
	case FieldHostName:
		return &m.HostName
	case FieldUserName:
		return &m.UserName
	case FieldPassword:
		return &m.Password
	case FieldAppName:
		return &m.AppName
	case FieldServerName:
		return &m.ServerName
	case FieldCltIntName:
		return &m.CltIntName
	case FieldLanguage:
		return &m.Language
	case FieldDatabase:
		return &m.Database
	case FieldAtchDBFile:
		return &m.AtchDBFile
	case FieldChangePassword:
		return &m.ChangePassword
	case FieldExtension, FieldSSPI:
	}
	return nil
}
