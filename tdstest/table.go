package tdstest

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// tableColumn is a column of a temporary table or of an INSERT BULK column list.
type tableColumn struct {
	Name    string
	TI      typeInfo // nullable form (see typeInfo.nullable)
	NotNull bool
}

// wireType is the TYPE_INFO SQL Server reports for the column: NOT NULL columns of types that
// have a fixed-length form use it (int NOT NULL is INT4TYPE).
func (c tableColumn) wireType() typeInfo {
	if !c.NotNull {
		return c.TI
	}
	ti := c.TI
	switch c.TI.Type {
	case dtIntN:
		ti.Type = map[int]dataType{1: dtInt1, 2: dtInt2, 4: dtInt4, 8: dtInt8}[c.TI.Size]
	case dtBitN:
		ti.Type = dtBit
	case dtFltN:
		ti.Type = map[int]dataType{4: dtFlt4, 8: dtFlt8}[c.TI.Size]
	case dtMoneyN:
		ti.Type = map[int]dataType{4: dtMoney4, 8: dtMoney}[c.TI.Size]
	case dtDateTimeN:
		ti.Type = map[int]dataType{4: dtDateTime4, 8: dtDateTime}[c.TI.Size]
	}
	return ti
}

// tempTable is a temporary table of one connection. It keeps no rows: only their count and the
// sum of the first column when that column is an integer (the checksum of doc.go), so that a
// load of any size takes constant memory.
type tempTable struct {
	name    string
	cols    []tableColumn
	rows    int64
	sum     int64 // of the non-NULL values of cols[0] (integer columns only)
	sumRows int64 // non-NULL values summed
}

// sumColumn reports whether col is the column whose sum the table keeps.
func (t *tempTable) sumColumn(col string) bool {
	return t.cols[0].TI.Type == dtIntN && strings.EqualFold(t.cols[0].Name, col)
}

func (t *tempTable) column(name string) int {
	for i, c := range t.cols {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// bulkTarget is the state INSERT BULK leaves for the BULK_LOAD message that follows.
type bulkTarget struct {
	table *tempTable
	cols  []int // table column of each INSERT BULK column
}

func errInvalidObject(name string) error {
	return &sqlError{Number: 208, State: 0, Class: 16, Msg: fmt.Sprintf("Invalid object name '%s'.", name)}
}

// table is the temporary table a statement names, or SQL Server's error for a missing one.
func (c *conn) table(st *statement) (*tempTable, error) {
	if t := c.tables[st.table]; t != nil {
		return t, nil
	}
	return nil, errInvalidObject(st.table)
}

// runCreateTable adds the temporary table, SQL Server's error 2714 if it exists.
func (c *conn) runCreateTable(st *statement, status uint16) error {
	if c.tables[st.table] != nil {
		return &sqlError{Number: 2714, State: 6, Class: 16,
			Msg: fmt.Sprintf("There is already an object named '%s' in the database.", st.table)}
	}
	if c.tables == nil {
		c.tables = map[string]*tempTable{}
	}
	c.tables[st.table] = &tempTable{name: st.table, cols: st.cols}
	c.rowCount = 0
	return c.emit(c.appendStmtDone(c.scratch[:0], status, 0, 0))
}

// runDropTable removes the temporary table: SQL Server's error 3701 if it does not exist, unless
// IF EXISTS.
func (c *conn) runDropTable(st *statement, status uint16) error {
	if c.tables[st.table] == nil && !st.ifExists {
		return &sqlError{Number: 3701, State: 5, Class: 11,
			Msg: fmt.Sprintf("Cannot drop the table '%s', because it does not exist or you do not have permission.", st.table)}
	}
	delete(c.tables, st.table)
	c.rowCount = 0
	return c.emit(c.appendStmtDone(c.scratch[:0], status, 0, 0))
}

// runInsertBulk checks INSERT BULK's columns against the table and arms the BULK_LOAD message
// that must follow (bulkload.go).
func (c *conn) runInsertBulk(st *statement, status uint16) error {
	t, err := c.table(st)
	if err != nil {
		return err
	}
	bt := &bulkTarget{table: t}
	for _, bc := range st.cols {
		k := t.column(bc.Name)
		if k < 0 {
			return &sqlError{Number: 207, State: 1, Class: 16, Msg: fmt.Sprintf("Invalid column name '%s'.", bc.Name)}
		}
		if got, want := bc.TI.decl(), t.cols[k].TI.decl(); got != want {
			return fmt.Errorf("%w: INSERT BULK declares column %s as %s, table %s has %s", errUnsupported, bc.Name, got, t.name, want)
		}
		bt.cols = append(bt.cols, k)
	}
	c.bulk = bt
	c.rowCount = 0
	return c.emit(c.appendStmtDone(c.scratch[:0], status, 0, 0))
}

// runCount answers SELECT COUNT(*) (int) or COUNT_BIG(*), SUM(CAST(col AS bigint)) (bigint,
// bigint) from what the table keeps: one row.
func (c *conn) runCount(st *statement, status uint16) error {
	t, err := c.table(st)
	if err != nil {
		return err
	}
	b := c.scratch[:0]
	if !st.countBig {
		b = c.appendColMetadata(b, []column{{TI: &tiInt}})
		b = append(b, tokenRow, 4)
		b = binary.LittleEndian.AppendUint32(b, uint32(t.rows))
	} else {
		if !t.sumColumn(st.sumCol) {
			return fmt.Errorf("%w: tdstest keeps the sum of %s's first column (an integer) only, not of %s",
				errUnsupported, t.name, st.sumCol)
		}
		b = c.appendColMetadata(b, []column{{TI: &tiBigint}, {TI: &tiBigint}})
		b = append(b, tokenRow, 8)
		b = binary.LittleEndian.AppendUint64(b, uint64(t.rows))
		if t.sumRows == 0 {
			b = append(b, 0) // SUM over no values is NULL
		} else {
			b = append(b, 8)
			b = binary.LittleEndian.AppendUint64(b, uint64(t.sum))
		}
	}
	c.rowCount = 1
	return c.emit(c.appendStmtDone(b, status|doneCount, curCmdSelect, 1))
}

// runTableMeta answers SELECT * FROM #t under SET FMTONLY ON (as CopyIn asks) with the table's
// COLMETADATA; without FMTONLY it is refused, as the table keeps no rows.
func (c *conn) runTableMeta(st *statement, status uint16) error {
	t, err := c.table(st)
	if err != nil {
		return err
	}
	if !c.fmtOnly {
		return fmt.Errorf("%w: tdstest keeps no rows: SELECT * FROM %s is answered under SET FMTONLY ON only (as CopyIn asks)", errUnsupported, t.name)
	}
	cols := make([]column, len(t.cols))
	for i, tc := range t.cols {
		ti := tc.wireType()
		cols[i] = column{Name: tc.Name, TI: &ti, NotNull: tc.NotNull}
	}
	c.rowCount = 0
	return c.emit(c.appendStmtDone(c.appendColMetadata(c.scratch[:0], cols), status, curCmdSelect, 0))
}

// addSum adds v to the running sum, reporting overflow as SQL Server's error 8115.
func addSum(sum, v int64) (int64, error) {
	r := sum + v // wraps on overflow, detected below
	if (sum >= 0) == (v >= 0) && (r >= 0) != (sum >= 0) {
		return 0, &sqlError{Number: 8115, State: 2, Class: 16, Msg: "Arithmetic overflow error converting expression to data type bigint."}
	}
	return r, nil
}
