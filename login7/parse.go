package login7

import "encoding/binary"

var le = binary.LittleEndian

// Layout is where the parts of a LOGIN7 message lie, as [Parse] found them. It holds offsets,
// not bytes: slice the message with its spans.
type Layout struct {
	TDSVersion uint32 // decides the fixed part: FixedLen71 for TDS 7.0 and 7.1, else FixedLen
	Len        int    // the message's length
	// FeatureExt is the FeatureExt block, from its first entry to its terminator included;
	// empty when the message has none.
	FeatureExt Span
	// Features are the FeatureExt entries in order; nil when FeatureExt is empty.
	Features []FeatureSpan

	spans [numFields]Span // non-empty fields; zero for empty ones and those the version lacks
	ib    [numFields]int  // every field's ib as written; -1 for those the version lacks
}

// FeatureSpan is where one FeatureExt entry lies.
type FeatureSpan struct {
	ID   byte // FeatureId, for example FeatureFedAuth
	At   int  // offset of its FeatureId byte
	Data Span // its FeatureData
}

// Span returns where f's data lies, as its OffsetLength entry declares it (2 bytes a
// character for strings; cbSSPILong for SSPI when cbSSPI is 0xFFFF). It is empty (zero) when
// the field is empty or absent from the message's TDS version.
func (l *Layout) Span(f Field) Span { return l.spans[f] }

// Extent returns f's span stretched to the offset of the next variable field, FeatureExt
// included, or to the end of the message; never shorter than [Layout.Span], empty when that
// is. It is where a reader that must not miss a byte of a secret takes the field to end:
// MS-TDS counts characters in cchPassword, and go-mssqldb counts runes, while the field is
// UTF-16, in which a character outside the Basic Multilingual Plane takes 4 bytes.
func (l *Layout) Extent(f Field) Span {
	sp := l.spans[f]
	if sp.Len() == 0 {
		return sp
	}
	end := l.Len
	for _, o := range l.ib {
		if o > sp.Start && o < end {
			end = o
		}
	}
	if o := l.FeatureExt.Start; l.FeatureExt.Len() > 0 && o > sp.Start && o < end {
		end = o
	}
	return Span{sp.Start, max(sp.End, end)}
}

// Parse checks the structure of the LOGIN7 message msg (the payload of its packets) and
// returns where its fields and FeatureExt entries lie. It checks every offset and length
// against the message and returns a *FormatError wrapping ErrMalformed, naming the field and
// its offset, when the message is longer than MaxLen or shorter than its fixed part, its
// Length field is not len(msg), its TDSVersion is unknown, a non-empty field lies outside
// the variable data, or FeatureExt is cut short. It does not judge values (see
// [Message.Decode]). Parse does not modify or retain msg.
func Parse(msg []byte) (Layout, error) {
	var l Layout
	switch {
	case len(msg) > MaxLen:
		return l, malformed("message", -1, "of %d bytes, longer than %d (128 KiB)", len(msg), MaxLen)
	case len(msg) < FixedLen71:
		return l, malformed("message", -1, "of %d bytes, shorter than the fixed part (%d bytes; %d from TDS 7.2 on)", len(msg), FixedLen71, FixedLen)
	}
	if n := le.Uint32(msg[OffLength:]); n != uint32(len(msg)) {
		return l, malformed("Length", OffLength, "field %d, message has %d bytes", n, len(msg))
	}
	l.TDSVersion, l.Len = le.Uint32(msg[OffTDSVersion:]), len(msg)
	header, known := fixedLen(l.TDSVersion)
	switch {
	case !known:
		return l, malformed("TDSVersion", OffTDSVersion, "%#08x unknown (want 7.0, 7.1, 7.2, 7.3, 7.4 or 8.0)", l.TDSVersion)
	case len(msg) < header:
		return l, malformed("message", -1, "of %d bytes, shorter than the TDS 7.2 fixed part (%d bytes)", len(msg), header)
	}
	legacy := header == FixedLen71
	for f := range Field(numFields) {
		info := &fields[f]
		if info.since72 && legacy {
			l.ib[f] = -1
			continue
		}
		ib, n := int(le.Uint16(msg[info.at:])), int(le.Uint16(msg[info.at+2:]))
		l.ib[f] = ib
		if info.ucs2 {
			n *= 2
		}
		if f == FieldSSPI && n == 0xFFFF && !legacy {
			long := le.Uint32(msg[OffSSPILong:])
			if uint64(long) > uint64(len(msg)) {
				return l, malformed("SSPI", OffSSPILong, "length (cbSSPILong) %d exceeds the %d-byte message", long, len(msg))
			}
			n = int(long)
		}
		if n == 0 {
			continue
		}
		if ib < header || ib+n > len(msg) {
			return l, malformed(info.name, info.at, "at offset %d length %d lies outside the variable data [%d, %d)", ib, n, header, len(msg))
		}
		l.spans[f] = Span{ib, ib + n}
	}
	if !legacy && msg[OffOptionFlags3]&FlagExtension != 0 {
		if err := l.parseFeatureExt(msg); err != nil {
			return l, err
		}
	}
	return l, nil
}

// parseFeatureExt finds the FeatureExt block through the 4-byte offset the Extension field
// holds and walks its entries to the terminator.
func (l *Layout) parseFeatureExt(msg []byte) error {
	ext := l.spans[FieldExtension]
	if ext.Len() < 4 {
		return malformed("Extension", FieldExtension.EntryAt(), "has %d bytes with fExtension set, want 4 (ibFeatureExtLong)", ext.Len())
	}
	start := le.Uint32(msg[ext.Start:])
	if start < FixedLen || uint64(start) >= uint64(len(msg)) {
		return malformed("FeatureExt", ext.Start, "offset %d (ibFeatureExtLong at %d) lies outside the variable data [%d, %d)", start, ext.Start, FixedLen, len(msg))
	}
	p := int(start)
	for {
		switch {
		case p >= len(msg):
			return malformed("FeatureExt", int(start), "at %d has no terminator (0xFF) before the end of the message (%d bytes)", start, len(msg))
		case msg[p] == FeatureTerminator:
			l.FeatureExt = Span{int(start), p + 1}
			if l.Features == nil {
				l.Features = []FeatureSpan{}
			}
			return nil
		case p+5 > len(msg):
			return malformed("FeatureExt", p, "entry 0x%02x at %d truncated: its 5-byte header passes the end of the message (%d bytes)", msg[p], p, len(msg))
		}
		n := uint64(le.Uint32(msg[p+1:]))
		if uint64(p+5)+n > uint64(len(msg)) {
			return malformed("FeatureExt", p, "entry 0x%02x at %d has %d data bytes, the message ends at %d", msg[p], p, n, len(msg))
		}
		l.Features = append(l.Features, FeatureSpan{ID: msg[p], At: p, Data: Span{p + 5, p + 5 + int(n)}})
		p += 5 + int(n)
	}
}
