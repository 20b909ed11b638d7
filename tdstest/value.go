package tdstest

import (
	"encoding/binary"
	"fmt"
	"math/big"
)

// sqlValue is one decoded value of a TYPE_INFO: an RPC parameter or a BULK_LOAD column.
type sqlValue struct {
	Null bool
	Len  int64  // data bytes (without the length prefix)
	Data []byte // the data bytes, an owned copy; nil when the reader was asked not to keep them
}

// PLP lengths (MS-TDS 2.2.5.2.3).
const (
	plpNull    = 0xFFFFFFFFFFFFFFFF
	plpUnknown = 0xFFFFFFFFFFFFFFFE
)

// readValue decodes one value of type ti. With keep the data is copied into the result; without
// it a (max) value is read and counted but not held (Data nil), and the Data of any other value
// aliases w's buffer until w's next read. limit bounds a (max) value's bytes.
// Every length is checked against the type; errors say what was wrong and at which offset.
func readValue(w *wireReader, ti typeInfo, keep bool, limit int64) (sqlValue, error) {
	at := w.off
	bad := func(format string, args ...any) (sqlValue, error) {
		return sqlValue{}, fmt.Errorf("%s value at offset %d: %s", ti.decl(), at, fmt.Sprintf(format, args...))
	}
	var n int64
	switch ti.lenKind() {
	case lenFixed:
		if ti.Type == dtNull {
			return sqlValue{Null: true}, nil
		}
		n = int64(ti.Size)
	case lenByte:
		b, err := w.byte()
		if err != nil {
			return bad("%v", err)
		}
		if b == 0 {
			return sqlValue{Null: true}, nil
		}
		lo, hi := ti.valueSizes()
		if int(b) < lo || int(b) > hi {
			return bad("length %d, want %d..%d or 0 (NULL)", b, lo, hi)
		}
		n = int64(b)
	case lenUShort:
		u, err := w.uint16()
		if err != nil {
			return bad("%v", err)
		}
		if u == 0xFFFF {
			return sqlValue{Null: true}, nil
		}
		if int(u) > ti.Size {
			return bad("length %d exceeds the declared %d", u, ti.Size)
		}
		n = int64(u)
	case lenPLP:
		return readPLP(w, ti, keep, limit)
	case lenLong:
		return readLong(w, ti, keep, limit)
	}
	b, err := w.bytes(int(n))
	if err != nil {
		return bad("%v", err)
	}
	v := sqlValue{Len: n, Data: b}
	if err := checkValue(ti, v); err != nil {
		return bad("%v", err)
	}
	if keep {
		v.Data = append([]byte(nil), b...)
	}
	return v, nil
}

// checkValue checks the content of a value that is not PLP (Data holds it).
func checkValue(ti typeInfo, v sqlValue) error {
	if err := checkDateTime(ti, v.Data); err != nil {
		return err
	}
	switch ti.Type {
	case dtDecimalN, dtNumericN, dtDecimal, dtNumeric:
		if v.Data[0] > 1 {
			return fmt.Errorf("sign byte %d, want 0 or 1", v.Data[0])
		}
		if !decimalFits(v.Data[1:], ti.Prec) {
			return fmt.Errorf("magnitude has more than %d digits", ti.Prec)
		}
	case dtBit, dtBitN:
		if v.Data[0] > 1 {
			return fmt.Errorf("bit value %d, want 0 or 1", v.Data[0])
		}
	case dtNVarChar, dtNChar:
		if v.Len%2 != 0 {
			return fmt.Errorf("odd byte count %d for UTF-16 text", v.Len)
		}
	}
	return nil
}

// leUint decodes a little-endian unsigned integer of up to 8 bytes.
func leUint(b []byte) uint64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	return u
}

// checkTime checks that the time of day b, in units of 10^-scale seconds, is below 24 hours.
func checkTime(b []byte, scale uint8) error {
	day := uint64(86400)
	for range scale {
		day *= 10
	}
	if t := leUint(b); t >= day {
		return fmt.Errorf("time of day %d is not below 24 hours at scale %d", t, scale)
	}
	return nil
}

// checkDate checks that the days since 0001-01-01 in b end at 9999-12-31 at the latest.
func checkDate(b []byte) error {
	if d := leUint(b); d > maxDateDays {
		return fmt.Errorf("date of %d days after 0001-01-01 is beyond 9999-12-31", d)
	}
	return nil
}

// checkDateTime checks the date, time and offset parts of the date and time types (data holds
// the value, whose size readValue checked).
func checkDateTime(ti typeInfo, data []byte) error {
	switch ti.Type {
	case dtDateN:
		return checkDate(data)
	case dtTimeN:
		return checkTime(data, ti.Scale)
	case dtDateTime2N, dtDateTimeOffset:
		tb := timeBytes(ti.Scale)
		if err := checkTime(data[:tb], ti.Scale); err != nil {
			return err
		}
		if err := checkDate(data[tb : tb+3]); err != nil {
			return err
		}
		if off := int16(leUint(data[tb+3:])); ti.Type == dtDateTimeOffset && (off < -840 || off > 840) {
			return fmt.Errorf("time zone offset of %d minutes, want -840..840", off)
		}
	}
	return nil
}

// readLong decodes a value of a LONGLEN type (text, ntext, image) as an RPC parameter carries
// it: a 4-byte length (0xFFFFFFFF for NULL), then the data (MS-TDS 2.2.5.2.3; the text pointer
// and timestamp of a ROW are not sent to the server).
func readLong(w *wireReader, ti typeInfo, keep bool, limit int64) (sqlValue, error) {
	at := w.off
	bad := func(format string, args ...any) (sqlValue, error) {
		return sqlValue{}, fmt.Errorf("%s value at offset %d: %s", ti.decl(), at, fmt.Sprintf(format, args...))
	}
	if ti.Type == dtVariant {
		return bad("sql_variant parameters are not supported by tdstest")
	}
	n, err := w.uint32()
	if err != nil {
		return bad("%v", err)
	}
	if n == 0xFFFFFFFF {
		return sqlValue{Null: true}, nil
	}
	switch {
	case n > maxLongLen:
		return bad("length %d, want at most %d or 0xFFFFFFFF (NULL)", n, maxLongLen)
	case int64(n) > int64(ti.Size):
		return bad("length %d exceeds the declared %d", n, ti.Size)
	case int64(n) > limit:
		return bad("length %d exceeds the limit of %d bytes", n, limit)
	case ti.Type == dtNText && n%2 != 0:
		return bad("odd byte count %d for UTF-16 text", n)
	}
	v := sqlValue{Len: int64(n)}
	if keep {
		v.Data, err = w.appendBytes([]byte{}, int64(n))
	} else {
		err = w.skip(int64(n))
	}
	if err != nil {
		return bad("%v", err)
	}
	return v, nil
}

// readPLP decodes a PLP value: total length, chunks, terminator.
func readPLP(w *wireReader, ti typeInfo, keep bool, limit int64) (sqlValue, error) {
	at := w.off
	bad := func(format string, args ...any) (sqlValue, error) {
		return sqlValue{}, fmt.Errorf("%s value at offset %d: %s", ti.decl(), at, fmt.Sprintf(format, args...))
	}
	total, err := w.uint64()
	if err != nil {
		return bad("%v", err)
	}
	if total == plpNull {
		return sqlValue{Null: true}, nil
	}
	if total != plpUnknown && total > uint64(limit) {
		return bad("PLP length %d exceeds the limit of %d bytes", total, limit)
	}
	var v sqlValue
	if keep {
		v.Data = []byte{}
	}
	for {
		chunkAt := w.off
		c, err := w.uint32()
		if err != nil {
			return bad("PLP chunk: %v", err)
		}
		if c == 0 {
			break
		}
		if v.Len+int64(c) > limit {
			return bad("PLP chunk of %d bytes at offset %d takes the value beyond the limit of %d bytes", c, chunkAt, limit)
		}
		if total != plpUnknown && uint64(v.Len)+uint64(c) > total {
			return bad("PLP chunk of %d bytes at offset %d exceeds the announced length %d", c, chunkAt, total)
		}
		if keep {
			v.Data, err = w.appendBytes(v.Data, int64(c))
		} else {
			err = w.skip(int64(c))
		}
		if err != nil {
			return bad("PLP chunk: %v", err)
		}
		v.Len += int64(c)
	}
	if total != plpUnknown && uint64(v.Len) != total {
		return bad("PLP chunks hold %d bytes, the announced length is %d", v.Len, total)
	}
	if ti.Type == dtNVarChar && v.Len%2 != 0 {
		return bad("odd byte count %d for UTF-16 text", v.Len)
	}
	return v, nil
}

// appendValue appends v as a ROW column value of the nullable type ti (see typeInfo.nullable):
// PLP values as one known length, one chunk and the terminator.
func appendValue(dst []byte, ti typeInfo, v sqlValue) []byte {
	switch ti.lenKind() {
	case lenFixed:
		return append(dst, v.Data...)
	case lenByte:
		if v.Null {
			return append(dst, 0)
		}
		dst = append(dst, byte(len(v.Data)))
		return append(dst, v.Data...)
	case lenUShort:
		if v.Null {
			return binary.LittleEndian.AppendUint16(dst, 0xFFFF)
		}
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(v.Data)))
		return append(dst, v.Data...)
	case lenLong:
		if ti.Type == dtVariant {
			// A 4-byte length, 0 for NULL, then the SSVARIANT_INSTANCE (MS-TDS 2.2.5.5.4).
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v.Data)))
			return append(dst, v.Data...)
		}
		// text, ntext, image in a ROW (MS-TDS 2.2.7.19): TextPointer (B_VARBYTE, empty for
		// NULL), an 8-byte Timestamp, then the data with a 4-byte length.
		if v.Null {
			return append(dst, 0)
		}
		dst = append(dst, byte(len(textPointer)))
		dst = append(dst, textPointer[:]...)
		dst = append(dst, make([]byte, 8)...)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v.Data)))
		return append(dst, v.Data...)
	}
	if v.Null {
		return binary.LittleEndian.AppendUint64(dst, plpNull)
	}
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(v.Data)))
	if len(v.Data) > 0 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v.Data)))
		dst = append(dst, v.Data...)
	}
	return binary.LittleEndian.AppendUint32(dst, 0)
}

// textPointer is the TextPointer of every text, ntext and image value tdstest writes: any 16
// bytes will do, as the server offers no text pointer operations.
var textPointer = [16]byte{'t', 'd', 's', 't', 'e', 's', 't', 0, 0, 0, 0, 0, 0, 0, 0, 1}

// dataLength is DATALENGTH of a value of type ti: the stored size of the value.
func dataLength(ti typeInfo, v sqlValue) int64 {
	switch ti.Type {
	case dtDecimalN, dtNumericN, dtDecimal, dtNumeric:
		return int64(decimalBytes(ti.Prec))
	}
	return v.Len
}

// maxDateDays is 9999-12-31 in days since 0001-01-01.
const maxDateDays = 3652058

// decimalFits reports whether the little-endian magnitude mag has at most prec decimal digits.
func decimalFits(mag []byte, prec uint8) bool {
	small := true
	for _, c := range mag[min(8, len(mag)):] {
		small = small && c == 0
	}
	if small {
		var u uint64
		for i := min(8, len(mag)) - 1; i >= 0; i-- {
			u = u<<8 | uint64(mag[i])
		}
		return prec >= 20 || u < pow10[prec] // 2^64 < 10^20
	}
	m := new(big.Int)
	be := make([]byte, len(mag))
	for i, c := range mag {
		be[len(mag)-1-i] = c
	}
	m.SetBytes(be)
	return m.Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(prec)), nil)) < 0
}

// pow10 holds 10^0 .. 10^19.
var pow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()
