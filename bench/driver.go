package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/mssqlbridge"
)

// Value types of the driver cells.
const (
	valueNVarchar  = "nvarchar"
	valueVarbinary = "varbinary"
)

// driverPacketSizes are the TDS packet sizes the driver cells request.
var driverPacketSizes = []int{4096, 16384}

// sweepRecordSizes are the TLS record sizes of the record-size sweep; the sweep runs the
// varbinary value at packet size 4096 (sweepPacketSize) with the TLS arms only.
var sweepRecordSizes = []int{1 << 10, 4 << 10, 16 << 10}

const sweepPacketSize = 4096

// valueQuery returns the query whose single value is size bytes on the wire, and the length of
// that value once scanned into Go bytes (nvarchar arrives as UTF-16 and is scanned as UTF-8).
func valueQuery(value string, size int) (query string, scanned int) {
	if value == valueNVarchar {
		return fmt.Sprintf("SELECT REPLICATE(CAST(N'x' AS nvarchar(max)), %d)", size/2), size / 2
	}
	return fmt.Sprintf("SELECT CAST(REPLICATE(CAST('x' AS varchar(max)), %d) AS varbinary(max))", size), size
}

// connectorFunc builds a go-mssqldb connector from a DSN: native (mssql.NewConnector) or bridged
// (mssqlbridge.NewConnector).
type connectorFunc func(dsn string) (driver.Connector, error)

// nativeConnector is go-mssqldb with its own TLS.
func nativeConnector(dsn string) (driver.Connector, error) { return mssql.NewConnector(dsn) }

// bridgedConnector is go-mssqldb through the bridge.
func bridgedConnector(dsn string) (driver.Connector, error) { return mssqlbridge.NewConnector(dsn) }

// armSpecs returns specs as this run connects them: as given, or, in a control run (-control),
// each on go-mssqldb's own transport. A bridged arm then keeps its name and encrypt setting but
// is a second native connection beside the native arm, so every ratio of the run compares two
// identical arms: what it shows is the measurement's noise, and how often the targets' rules
// flag a difference where there is none.
func (c *config) armSpecs(specs []driverArmSpec) []driverArmSpec {
	if !c.control {
		return specs
	}
	out := make([]driverArmSpec, len(specs))
	for i, s := range specs {
		s.newConnector = nativeConnector
		out[i] = s
	}
	return out
}

// benchConn is one open connection of one arm, pinned for the whole run.
type benchConn struct {
	db   *sql.DB
	conn *sql.Conn
}

// openConn opens a database with at most one connection and pins that connection.
func openConn(ctx context.Context, newConnector connectorFunc, dsn string) (*benchConn, error) {
	c, err := newConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("connector: %w", err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := db.Conn(cctx)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := conn.PingContext(cctx); err != nil {
		_ = conn.Close()
		_ = db.Close()
		return nil, fmt.Errorf("ping: %w", err)
	}
	return &benchConn{db: db, conn: conn}, nil
}

// close closes the connection and its database.
func (bc *benchConn) close() error {
	err := bc.conn.Close()
	if derr := bc.db.Close(); err == nil {
		err = derr
	}
	return err
}

// queryValue runs query and reads its single value into *v, checking that it has want bytes
// once scanned. It returns the value's size on the wire, wire. *v keeps its capacity from one
// call to the next, so that a value the driver hands over as a string is copied without a new
// allocation each time (a []byte value is not copied at all).
func (bc *benchConn) queryValue(ctx context.Context, query string, v *sql.RawBytes, want int, wire int64) (int64, error) {
	rows, err := bc.conn.QueryContext(ctx, query)
	if err != nil {
		return 0, fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, fmt.Errorf("query: %w", err)
		}
		return 0, fmt.Errorf("query: no row")
	}
	if err := rows.Scan(v); err != nil {
		return 0, fmt.Errorf("scan: %w", err)
	}
	if len(*v) != want {
		return 0, fmt.Errorf("value of %d bytes, want %d", len(*v), want)
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("close rows: %w", err)
	}
	return wire, nil
}

// queryArm returns a sample function that runs the value query on bc for d.
func queryArm(bc *benchConn, value string, size int) func(context.Context, time.Duration) (report.Sample, error) {
	q, want := valueQuery(value, size)
	var v sql.RawBytes
	return func(ctx context.Context, d time.Duration) (report.Sample, error) {
		sctx, cancel := context.WithTimeout(ctx, d+sampleGrace)
		defer cancel()
		return measureFor(sctx, d, 1, func() (int64, error) { return bc.queryValue(sctx, q, &v, want, int64(size)) })
	}
}

// driverArmSpec is one way of connecting: which connector and which encrypt setting.
type driverArmSpec struct {
	name         string
	newConnector connectorFunc
	encrypt      string // go-mssqldb's encrypt parameter
}

var (
	specNativeTLS     = driverArmSpec{report.ArmNativeTLS, nativeConnector, "true"}
	specBridgedTLS    = driverArmSpec{report.ArmBridgedTLS, bridgedConnector, "true"}
	specNativePlain   = driverArmSpec{report.ArmNativePlain, nativeConnector, "disable"}
	specBridgedPlain  = driverArmSpec{report.ArmBridgedPlain, bridgedConnector, "disable"}
	driverArmSpecs    = []driverArmSpec{specNativeTLS, specBridgedTLS, specNativePlain, specBridgedPlain}
	sweepArmSpecs     = []driverArmSpec{specNativeTLS, specBridgedTLS}
	trustLocalServer  = map[string]string{"trustservercertificate": "true"}
	plainArmsOptional = map[string]bool{report.ArmNativePlain: true, report.ArmBridgedPlain: true}
)

// driverTarget is a server the driver arms connect to.
type driverTarget struct {
	dsn        string            // base DSN
	extra      map[string]string // parameters added to every DSN (e.g. trust the local certificate)
	recordSize int               // the server's TLS record size (0: one per packet)
	local      bool              // the tdstest child, as opposed to -dsn
}

// armDSN returns the DSN with which spec connects to t at packet size ps.
func (t driverTarget) armDSN(spec driverArmSpec, ps int) (string, error) {
	params := map[string]string{"encrypt": spec.encrypt, "packet size": strconv.Itoa(ps)}
	for k, v := range t.extra {
		params[k] = v
	}
	return withParams(t.dsn, params)
}

// driverPool opens and keeps one connection per (target, arm, packet size), shared by the cells
// that use it. A connection that failed to open is not tried again: the same error is returned.
type driverPool struct {
	conns  map[string]*benchConn
	failed map[string]error
}

// get returns the connection for the arm at packet size ps on target, opening it on first use.
func (p *driverPool) get(ctx context.Context, t driverTarget, spec driverArmSpec, ps int) (bc *benchConn, err error) {
	key := fmt.Sprintf("%s|%d|%s|%d", t.dsn, t.recordSize, spec.name, ps)
	if bc, ok := p.conns[key]; ok {
		return bc, nil
	}
	if err, ok := p.failed[key]; ok {
		return nil, err
	}
	defer func() {
		if err != nil {
			if p.failed == nil {
				p.failed = map[string]error{}
			}
			p.failed[key] = err
		}
	}()
	dsn, err := t.armDSN(spec, ps)
	if err != nil {
		return nil, err
	}
	bc, err = openConn(ctx, spec.newConnector, dsn)
	if err != nil {
		return nil, fmt.Errorf("bench: %s, packet size %d: %w", spec.name, ps, err)
	}
	p.conns[key] = bc
	return bc, nil
}

// close closes every connection and returns the first error.
func (p *driverPool) close() error {
	var first error
	for _, bc := range p.conns {
		if err := bc.close(); err != nil && first == nil {
			first = fmt.Errorf("bench: close connection: %w", err)
		}
	}
	return first
}
