package login7

import (
	"github.com/tdsbridge/tdsbridge/internal/login7pw"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// Encode appends the LOGIN7 message m to dst and returns the extended buffer. It writes the
// canonical layout: the fixed part (FixedLen71 bytes for TDS 7.0 and 7.1, else FixedLen), then
// each field's data in the order of the OffsetLength table, an empty field's offset being where
// its data would start (0 past 65535); the Extension field holds the 4-byte offset of the
// FeatureExt block, which comes last, when Features is non-nil. Strings are written as
// UTF-16LE with their length in UTF-16 code units, Password and ChangePassword obfuscated;
// m.FedAuth and m.Layout are ignored. Encode returns a *FormatError wrapping
// ErrInvalidMessage, and dst, when the version is unknown, a string is longer than MS-TDS
// allows, a TDS 7.0 or 7.1 message has ChangePassword, Features or 64 KiB of SSPI, a
// non-empty field would start past the 65535 bytes an offset can address, a feature has the
// terminator's ID, or the message is longer than MaxLen.
func (m *Message) Encode(dst []byte) ([]byte, error) {
	header, known := fixedLen(m.TDSVersion)
	legacy := header == FixedLen71
	switch {
	case !known:
		return dst, invalid("TDSVersion", "%#08x unknown (want 7.0, 7.1, 7.2, 7.3, 7.4 or 8.0)", m.TDSVersion)
	case legacy && m.ChangePassword != "":
		return dst, invalid("ChangePassword", "needs TDS 7.2 or later (TDSVersion %#08x)", m.TDSVersion)
	case legacy && m.Features != nil:
		return dst, invalid("FeatureExt", "needs TDS 7.2 or later (TDSVersion %#08x)", m.TDSVersion)
	}
	for f := range Field(numFields) {
		if s := m.str(f); s != nil && ucs2.Len(*s) > fields[f].maxChars {
			return dst, invalid(fields[f].name, "has %d characters, at most %d allowed", ucs2.Len(*s), fields[f].maxChars)
		}
	}
	for i, ft := range m.Features {
		if ft.ID == FeatureTerminator {
			return dst, invalid("FeatureExt", "entry %d has the terminator's ID 0xFF", i)
		}
	}
	start := len(dst)
	b := append(dst, make([]byte, header)...)
	put32 := func(at int, v uint32) { le.PutUint32(b[start+at:], v) }
	put32(OffTDSVersion, m.TDSVersion)
	put32(OffPacketSize, m.PacketSize)
	put32(OffClientProgVer, m.ClientProgVer)
	put32(OffClientPID, m.ClientPID)
	put32(OffConnectionID, m.ConnectionID)
	flags3 := m.OptionFlags3
	if !legacy {
		flags3 &^= FlagExtension
		if m.Features != nil {
			flags3 |= FlagExtension
		}
	}
	copy(b[start+OffOptionFlags1:], []byte{m.OptionFlags1, m.OptionFlags2, m.TypeFlags, flags3})
	put32(OffClientTimeZone, uint32(m.ClientTimeZone))
	put32(OffClientLCID, m.ClientLCID)
	copy(b[start+OffClientID:], m.ClientID[:])
	extAt := -1
	for f := range Field(numFields) {
		info := &fields[f]
		if info.since72 && legacy {
			continue
		}
		ib := len(b) - start
		var n int // the length written in the entry
		switch s := m.str(f); {
		case s != nil && info.obfuscate:
			u := ucs2.Append(nil, *s)
			o := login7pw.Obfuscate(u)
			b = append(b, o...)
			clear(u)
			clear(o)
			n = ucs2.Len(*s)
		case s != nil:
			b = ucs2.Append(b, *s)
			n = ucs2.Len(*s)
		case f == FieldExtension && m.Features != nil:
			extAt = len(b)
			b = append(b, 0, 0, 0, 0)
			n = 4
		case f == FieldSSPI:
			b = append(b, m.SSPI...)
			n = len(m.SSPI)
			if n >= 0xFFFF && legacy {
				return dst, invalid("SSPI", "of %d bytes needs cbSSPILong, TDS 7.2 or later", n)
			}
			if n >= 0xFFFF {
				put32(OffSSPILong, uint32(n))
				n = 0xFFFF
			}
		}
		switch {
		case ib > 0xFFFF && n > 0:
			return dst, invalid(info.name, "would start at byte %d, past the 65535 an offset can address", ib)
		case ib > 0xFFFF:
			ib = 0 // an empty field after long SSPI data; no byte is read at its offset
		}
		le.PutUint16(b[start+info.at:], uint16(ib))
		le.PutUint16(b[start+info.at+2:], uint16(n))
	}
	if extAt >= 0 {
		le.PutUint32(b[extAt:], uint32(len(b)-start))
		for _, ft := range m.Features {
			b = append(b, ft.ID)
			b = le.AppendUint32(b, uint32(len(ft.Data)))
			b = append(b, ft.Data...)
		}
		b = append(b, FeatureTerminator)
	}
	if n := len(b) - start; n > MaxLen {
		return dst, invalid("message", "of %d bytes, longer than %d (128 KiB)", n, MaxLen)
	}
	put32(OffLength, uint32(len(b)-start))
	return b, nil
}
