package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// Read patterns of the transport cells.
const (
	pattern64K = "64 KiB reads"
	patternTDS = "TDS header+body"
)

// transportRecordSizes are the TLS record sizes of the transport cells.
var transportRecordSizes = []int{1 << 10, 4 << 10, 16 << 10}

// transportSetup is what the transport arms connect to: the stream child's addresses and the
// pool that trusts its certificate.
type transportSetup struct {
	tlsAddr, bridgeAddr, tcpAddr string
	roots                        *x509.CertPool
}

// newTransportSetup reads the stream child's info.
func newTransportSetup(ch *child) (*transportSetup, error) {
	var ts transportSetup
	var err error
	for _, kv := range []struct {
		key string
		dst *string
	}{{infoTLS, &ts.tlsAddr}, {infoBridge, &ts.bridgeAddr}, {infoTCP, &ts.tcpAddr}} {
		if *kv.dst, err = ch.get(kv.key); err != nil {
			return nil, err
		}
	}
	cert, err := ch.get(infoCert)
	if err != nil {
		return nil, err
	}
	if ts.roots, err = certPoolFromBase64(cert); err != nil {
		return nil, err
	}
	return &ts, nil
}

// clientConfig is the transport arms' client TLS configuration, verifying the child's
// certificate.
func (ts *transportSetup) clientConfig() *tls.Config {
	cfg := streamTLSConfig()
	cfg.RootCAs = ts.roots
	return cfg
}

// transportCells returns one cell per record size and read pattern, each with the tls.Conn arm
// and the two bridge arms (coalescing Reader; tls.Conn read directly after CoalesceRecords). The
// stream is TDS packets of streamPacketSize bytes whatever the record size, so the TDS
// header+body cells read as go-mssqldb does at packet size 4096 from the driver sweep's servers
// (records of 1, 4 and 16 KiB): with 16 KiB records, four packets per record, eight Reads per
// record (a header of 8 bytes, a body of 4088), every one but the first served from the record
// the tls.Conn already holds. Only the "bridge, tls.Conn read" arm is the path of those reads
// through mssqlbridge; the coalescing Reader's ratio in the TDS cells is informational.
func (ts *transportSetup) transportCells() []*cellRunner {
	var cells []*cellRunner
	for _, rs := range transportRecordSizes {
		for _, pat := range []string{pattern64K, patternTDS} {
			res := &report.Cell{
				Group:      report.GroupTransport,
				Name:       fmt.Sprintf("%s records, %s", report.SizeLabel(rs), pat),
				RecordSize: rs,
				Pattern:    pat,
			}
			arms := []armRunner{
				{report.ArmTLSConn, ts.streamArm(ts.dialTLS, rs, pat)},
				{report.ArmBridge, ts.streamArm(ts.dialBridge, rs, pat)},
				{report.ArmBridgeCoalesce, ts.streamArm(ts.dialBridgeCoalesce, rs, pat)},
			}
			cells = append(cells, newCell(res, arms, [][2]string{{report.ArmBridge, report.ArmTLSConn}, {report.ArmBridgeCoalesce, report.ArmTLSConn}}))
		}
	}
	return cells
}

// informationalWhy says why the ratios that informational names are shown and not judged.
const informationalWhy = "the coalescing Reader read TDS-style, header then body: no driver reads so; " +
	"go-mssqldb through mssqlbridge reads the tls.Conn directly, the \"" + report.ArmBridgeCoalesce + "\" arm"

// informational says whether a client CPU ratio of c is shown without being judged: left out of
// the guard, of Holm's family and of the verdict's lists. That is the coalescing Reader
// (bridge.NewReader, the "bridge" arm) in the TDS header+body cells. The Reader is for clients
// that read in large chunks (the 64 KiB cells); a TDS client's header and body reads go through
// it only to pay its per-Read cost (two round trips of the bridge's read lock, setNoBlock, even
// when the tls.Conn filled the read) eight times per 16 KiB record, and no driver reads that
// way: mssqlbridge hands go-mssqldb the tls.Conn itself (CoalesceRecords under it).
func informational(c *report.Cell, q report.Ratio) bool {
	return c.Group == report.GroupTransport && c.Pattern == patternTDS && q.Candidate == report.ArmBridge
}

// dialFunc connects one transport arm, runs its handshake and returns the reader the client
// measures and the conn (to set the read deadline on, and to close).
type dialFunc func(ctx context.Context, recordSize int) (io.Reader, net.Conn, error)

// streamArm returns a sample function: connect (not measured), then read the stream with the
// pattern for the sample's duration (measured), then hang up.
func (ts *transportSetup) streamArm(dial dialFunc, recordSize int, pat string) func(context.Context, time.Duration) (report.Sample, error) {
	return func(ctx context.Context, d time.Duration) (report.Sample, error) {
		dctx, cancel := context.WithTimeout(ctx, sampleGrace)
		defer cancel()
		r, c, err := dial(dctx, recordSize)
		if err != nil {
			return report.Sample{}, err
		}
		defer c.Close()
		if err := c.SetReadDeadline(time.Now().Add(d + sampleGrace)); err != nil {
			return report.Sample{}, fmt.Errorf("set read deadline: %w", err)
		}
		if pat == pattern64K {
			buf := make([]byte, 64<<10)
			return measureFor(ctx, d, 16, func() (int64, error) {
				n, err := r.Read(buf)
				if err != nil {
					return 0, fmt.Errorf("read: %w", err)
				}
				return int64(n), nil
			})
		}
		buf := make([]byte, streamPacketSize)
		return measureFor(ctx, d, 16, func() (int64, error) { return readTDSPacket(r, buf) })
	}
}

// readTDSPacket reads one TDS packet the way go-mssqldb does: exactly the 8-byte header, then
// exactly the body the header's length announces. buf must hold the largest packet.
func readTDSPacket(r io.Reader, buf []byte) (int64, error) {
	if _, err := io.ReadFull(r, buf[:8]); err != nil {
		return 0, fmt.Errorf("read packet header: %w", err)
	}
	n := int(binary.BigEndian.Uint16(buf[2:4]))
	if n < 8 || n > len(buf) {
		return 0, fmt.Errorf("packet length %d out of range 8..%d", n, len(buf))
	}
	if _, err := io.ReadFull(r, buf[8:n]); err != nil {
		return 0, fmt.Errorf("read packet body: %w", err)
	}
	return int64(n), nil
}

// dialTLS connects to the plain TLS listener: tls.Client directly on the socket; the arm reads
// the tls.Conn itself.
func (ts *transportSetup) dialTLS(ctx context.Context, recordSize int) (io.Reader, net.Conn, error) {
	raw, err := dialLoopback(ctx, ts.tlsAddr)
	if err != nil {
		return nil, nil, err
	}
	tc := tls.Client(raw, ts.clientConfig())
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, nil, fmt.Errorf("tls handshake: %w", err)
	}
	if err := sendStreamRequest(tc, recordSize); err != nil {
		_ = tc.Close()
		return nil, nil, err
	}
	return tc, tc, nil
}

// sendStreamRequest asks the server for records of recordSize bytes.
func sendStreamRequest(tc *tls.Conn, recordSize int) error {
	var req [streamRequestSize]byte
	binary.BigEndian.PutUint32(req[:], uint32(recordSize))
	if _, err := tc.Write(req[:]); err != nil {
		return fmt.Errorf("send stream request: %w", err)
	}
	return nil
}

// dialLoopback connects over TCP.
func dialLoopback(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return c, nil
}
