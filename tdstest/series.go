package tdstest

import (
	"encoding/binary"
	"strconv"
	"time"
)

// The columns of GENERATE_SERIES results. value is reported nullable (INTN), like the wide
// row's columns, which are CASTs and so nullable in SQL Server's metadata.
var (
	tiBigint    = typeInfo{Type: dtIntN, Size: 8}
	tiInt       = typeInfo{Type: dtIntN, Size: 4}
	tiName      = typeInfo{Type: dtNVarChar, Size: 100, Collation: serverCollation}
	tiTimestamp = typeInfo{Type: dtDateTime2N, Scale: 7}
	tiAmount    = typeInfo{Type: dtDecimalN, Size: 9, Prec: 18, Scale: 4}
	tiFlag      = typeInfo{Type: dtBitN, Size: 1}

	seriesCols = []column{{Name: "value", TI: &tiBigint}}
	wideCols   = []column{{Name: "id", TI: &tiInt}, {Name: "name", TI: &tiName}, {Name: "ts", TI: &tiTimestamp},
		{Name: "amount", TI: &tiAmount}, {Name: "flag", TI: &tiFlag}}
)

// wideBaseDays is 2026-01-01 in days since 0001-01-01, the date part of datetime2.
var wideBaseDays = (time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix() - time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()) / 86400

// seriesFlush is how many bytes of rows are gathered before a Write to the packet writer.
const seriesFlush = 8 << 10

// runSeries streams the rows of a GENERATE_SERIES statement (none under SET FMTONLY ON) and sets
// @@ROWCOUNT to their number: memory stays at one buffer of about seriesFlush bytes whatever the
// count.
func (c *conn) runSeries(st *statement, status uint16) error {
	s := st.series
	cols := seriesCols
	if s.wide {
		cols = wideCols
	}
	b := c.appendColMetadata(c.valBuf[:0], cols)
	n := s.count()
	if c.fmtOnly {
		n = 0
	}
	step := int64(1)
	if s.stop < s.start {
		step = -1
	}
	v := s.start
	for i := int64(0); i < n; i, v = i+1, v+step {
		b = append(b, tokenRow)
		if s.wide {
			b = appendWideRow(b, v)
		} else {
			b = append(b, 8)
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		if len(b) >= seriesFlush {
			if _, err := c.out.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	b = c.appendStmtDone(b, status|doneCount, curCmdSelect, uint64(n))
	c.valBuf = b[:0]
	c.rowCount = n
	_, err := c.out.Write(b)
	return err
}

// appendWideRow appends the column values of WideRowsQuery's row for value v (within the int
// range, as the parser checked).
func appendWideRow(b []byte, v int64) []byte {
	// id: CAST(value AS int)
	b = append(b, 4)
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(v)))
	// name: CAST(CONCAT(N'name-', value) AS nvarchar(50))
	var digits [24]byte
	name := append(append(digits[:0], "name-"...), strconv.AppendInt(nil, v, 10)...)
	b = binary.LittleEndian.AppendUint16(b, uint16(2*len(name)))
	for _, ch := range name {
		b = append(b, ch, 0)
	}
	// ts: DATEADD(SECOND, value, '2026-01-01T00:00:00') as datetime2(7): 5 bytes of 100 ns
	// ticks since midnight, 3 bytes of days since 0001-01-01.
	days, secs := wideBaseDays+v/86400, v%86400
	if secs < 0 {
		days, secs = days-1, secs+86400
	}
	ticks := uint64(secs) * 10_000_000
	b = append(b, 8, byte(ticks), byte(ticks>>8), byte(ticks>>16), byte(ticks>>24), byte(ticks>>32),
		byte(days), byte(days>>8), byte(days>>16))
	// amount: CAST(value / 4.0 AS decimal(18,4)) is value*2500 at scale 4, exact.
	sign, mag := byte(1), v*2500
	if mag < 0 {
		sign, mag = 0, -mag
	}
	b = append(b, 9, sign)
	b = binary.LittleEndian.AppendUint64(b, uint64(mag))
	// flag: CAST(value % 2 AS bit): any non-zero remainder is 1.
	flag := byte(0)
	if v%2 != 0 {
		flag = 1
	}
	return append(b, 1, flag)
}
