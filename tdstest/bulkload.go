package tdstest

import (
	"fmt"
	"io"
	"strings"

	"github.com/tdsbridge/tdsbridge/tds"
)

// maxBulkValue bounds one (max) value of a BULK_LOAD row (the limit of the (max) types).
const maxBulkValue = maxPLPValue

// messageReader reads the payload of one message packet by packet: memory stays at one packet
// whatever the message's size. err is the first error of the packet stream (the connection is
// then unusable); io.EOF marks the end of the message.
type messageReader struct {
	in  *tds.Reader
	cur []byte // rest of the current packet's body (aliases in's buffer)
	eom bool   // cur is the last packet's body
	err error
}

func (m *messageReader) Read(b []byte) (int, error) {
	for len(m.cur) == 0 {
		if m.eom {
			return 0, io.EOF
		}
		if m.err != nil {
			return 0, m.err
		}
		h, body, err := m.in.ReadPacket()
		if err != nil {
			m.err = err
			return 0, err
		}
		m.cur, m.eom = body, h.Status&tds.StatusEOM != 0
	}
	n := copy(b, m.cur)
	m.cur = m.cur[n:]
	return n, nil
}

// drain reads and discards the rest of the message.
func (m *messageReader) drain() error {
	_, err := io.Copy(io.Discard, m)
	return err
}

// bulkResult is what a valid BULK_LOAD message adds to its table.
type bulkResult struct {
	rows, sum, sumRows int64
}

// bulkLoad answers a BULK_LOAD message whose first packet body has been read: COLMETADATA
// matching the INSERT BULK that came before, ROW tokens, DONE. Every row is validated; a bad one
// fails the whole load with an ERROR (the table is unchanged), a good load is answered with a
// DONE carrying the row count. Only a broken packet stream closes the connection.
func (c *conn) bulkLoad(first []byte, eom bool) error {
	mr := &messageReader{in: c.in, cur: first, eom: eom}
	bt := c.bulk
	c.bulk = nil
	if bt == nil {
		if err := mr.drain(); err != nil {
			return fmt.Errorf("read BULK_LOAD: %w", err)
		}
		return c.refuse("tdstest: a BULK_LOAD message must follow an INSERT BULK statement")
	}
	res, derr := decodeBulkLoad(newWireReader(mr), bt)
	if mr.err != nil {
		return fmt.Errorf("read BULK_LOAD: %w", mr.err)
	}
	if derr != nil {
		if err := mr.drain(); err != nil {
			return fmt.Errorf("read BULK_LOAD: %w", err)
		}
		c.logf("bulk load into %s refused: %v", bt.table.name, derr)
		return c.writeTokens(c.appendDone(c.appendRefusal(c.scratch[:0], derr), doneError, 0, 0))
	}
	t := bt.table
	if len(bt.cols) > 0 && bt.cols[0] == 0 && t.cols[0].TI.Type == dtIntN {
		sum, err := addSum(t.sum, res.sum)
		if err != nil {
			return c.writeTokens(c.appendDone(c.appendRefusal(c.scratch[:0], err), doneError, 0, 0))
		}
		t.sum, t.sumRows = sum, t.sumRows+res.sumRows
	}
	t.rows += res.rows
	c.rowCount, c.lastError = res.rows, 0 // a bulk load is an INSERT: @@ROWCOUNT is its rows
	c.logf("bulk load into %s: %d rows", t.name, res.rows)
	return c.writeTokens(c.appendDone(c.scratch[:0], doneCount, 0, uint64(res.rows)))
}

// decodeBulkLoad decodes and validates a BULK_LOAD payload for target. It keeps no row: only
// the count and the sum of the table's first column when that column is loaded and an integer.
func decodeBulkLoad(w *wireReader, target *bulkTarget) (bulkResult, error) {
	var res bulkResult
	tis, err := readBulkColMetadata(w, target)
	if err != nil {
		return res, err
	}
	t := target.table
	sumCol := len(target.cols) > 0 && target.cols[0] == 0 && t.cols[0].TI.Type == dtIntN
	for {
		at := w.off
		tok, err := w.byte()
		if err != nil {
			return res, fmt.Errorf("tdstest: BULK_LOAD after %d rows: %w (no DONE)", res.rows, err)
		}
		switch tok {
		case tokenRow:
			if err := readBulkRow(w, target, tis, sumCol, &res); err != nil {
				return res, err
			}
		case tokenDone:
			return res, readBulkDone(w, at)
		default:
			return res, fmt.Errorf("tdstest: BULK_LOAD token 0x%02X at offset %d after %d rows, want ROW (0xD1) or DONE (0xFD)", tok, at, res.rows)
		}
	}
}

// readBulkColMetadata reads the COLMETADATA that starts a BULK_LOAD and checks it against the
// INSERT BULK columns: the same names, in the same order, of the table's types. It returns the
// columns' types as the message declares them.
func readBulkColMetadata(w *wireReader, target *bulkTarget) ([]typeInfo, error) {
	tok, err := w.byte()
	if err != nil {
		return nil, fmt.Errorf("tdstest: BULK_LOAD: %w", err)
	}
	if tok != tokenColMetadata {
		return nil, fmt.Errorf("tdstest: BULK_LOAD starts with token 0x%02X, want COLMETADATA (0x81)", tok)
	}
	n, err := w.uint16()
	if err != nil {
		return nil, fmt.Errorf("tdstest: BULK_LOAD COLMETADATA: %w", err)
	}
	if int(n) != len(target.cols) {
		return nil, fmt.Errorf("tdstest: BULK_LOAD COLMETADATA has %d columns, INSERT BULK named %d", n, len(target.cols))
	}
	tis := make([]typeInfo, n)
	for i, k := range target.cols {
		if tis[i], err = readBulkColumn(w, i, target.table.cols[k]); err != nil {
			return nil, err
		}
	}
	return tis, nil
}

// readBulkColumn reads column i of a BULK_LOAD's COLMETADATA, which must be col.
func readBulkColumn(w *wireReader, i int, col tableColumn) (typeInfo, error) {
	at := w.off
	if _, err := w.bytes(6); err != nil { // UserType u32, Flags u16
		return typeInfo{}, fmt.Errorf("tdstest: BULK_LOAD COLMETADATA column %d: %w", i+1, err)
	}
	ti, err := readTypeInfo(w)
	if err != nil {
		return typeInfo{}, fmt.Errorf("tdstest: BULK_LOAD COLMETADATA column %d: %w", i+1, err)
	}
	if ti.Type.isLong() {
		// Their COLMETADATA carries a TableName, and tdstest tables hold no such columns.
		return typeInfo{}, fmt.Errorf("tdstest: BULK_LOAD COLMETADATA column %d at offset %d is %s: text, ntext and image columns are not supported", i+1, at, ti.decl())
	}
	name, err := w.bVarChar()
	if err != nil {
		return typeInfo{}, fmt.Errorf("tdstest: BULK_LOAD COLMETADATA column %d: %w", i+1, err)
	}
	if !strings.EqualFold(name, col.Name) {
		return typeInfo{}, fmt.Errorf("tdstest: BULK_LOAD COLMETADATA column %d at offset %d is %q, INSERT BULK named %q", i+1, at, name, col.Name)
	}
	if got := ti.nullable(); got.Type != col.TI.Type || got.Size != col.TI.Size || got.Prec != col.TI.Prec || got.Scale != col.TI.Scale {
		return typeInfo{}, fmt.Errorf("tdstest: BULK_LOAD column %s at offset %d is %s, the table has %s", col.Name, at, ti.decl(), col.TI.decl())
	}
	return ti, nil
}

// readBulkRow reads the values of one ROW (after its token) and adds it to res: its count, and
// the value of the table's first column to the sum when sumCol.
func readBulkRow(w *wireReader, target *bulkTarget, tis []typeInfo, sumCol bool, res *bulkResult) error {
	t := target.table
	for i, k := range target.cols {
		col := t.cols[k]
		v, err := readValue(w, tis[i], false, maxBulkValue)
		if err != nil {
			return fmt.Errorf("tdstest: BULK_LOAD row %d column %s: %w", res.rows+1, col.Name, err)
		}
		if v.Null && col.NotNull {
			return &sqlError{Number: 515, State: 2, Class: 16, Msg: fmt.Sprintf(
				"Cannot insert the value NULL into column '%s', table '%s'; column does not allow nulls. INSERT fails. (BULK_LOAD row %d)",
				col.Name, t.name, res.rows+1)}
		}
		if i == 0 && sumCol && !v.Null {
			if res.sum, err = addSum(res.sum, leInt(v.Data)); err != nil {
				return err
			}
			res.sumRows++
		}
	}
	res.rows++
	return nil
}

// readBulkDone reads the DONE (after its token, at offset at) that must end a BULK_LOAD.
func readBulkDone(w *wireReader, at int64) error {
	if _, err := w.bytes(12); err != nil {
		return fmt.Errorf("tdstest: BULK_LOAD DONE at offset %d: %w", at, err)
	}
	if w.atEOF() {
		return nil
	}
	if w.err != nil {
		return fmt.Errorf("tdstest: BULK_LOAD: %w", w.err)
	}
	return fmt.Errorf("tdstest: BULK_LOAD has bytes after DONE (offset %d)", w.off)
}
