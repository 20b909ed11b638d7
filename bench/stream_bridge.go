package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"

	"github.com/tdsbridge/tdsbridge/bridge"
)

// serveBridge runs the TLS handshake inside PRELOGIN packets through a bridge in the server
// role, switches it to passthrough, then streams.
func (s *streamServer) serveBridge(c net.Conn) error {
	bc := &burstConn{Conn: c}
	b, tc := bridge.Server(bc, s.tlsConfig(), bridge.Options{})
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("bridge handshake: %w", err)
	}
	if err := b.StartPassthrough(); err != nil {
		return fmt.Errorf("bridge passthrough: %w", err)
	}
	return streamRecords(tc, bc.burst)
}

// dialBridge connects to the bridge listener: the handshake through bridge.Client and
// StartPassthrough, and the arm reads through bridge.NewReader (coalesced reads of 64 KiB), the
// Reader for clients that read in large chunks; no driver reads TDS-style through it, so its
// ratio in the TDS header+body cells is informational (see informational).
func (ts *transportSetup) dialBridge(ctx context.Context, recordSize int) (io.Reader, net.Conn, error) {
	tc, b, err := ts.dialBridgeTLS(ctx, recordSize)
	if err != nil {
		return nil, nil, err
	}
	return bridge.NewReader(tc, b, 64<<10), tc, nil
}

// dialBridgeCoalesce connects as dialBridge does, then calls CoalesceRecords, and the arm reads
// the tls.Conn itself: the path mssqlbridge's driver reads take in full encryption.
func (ts *transportSetup) dialBridgeCoalesce(ctx context.Context, recordSize int) (io.Reader, net.Conn, error) {
	tc, b, err := ts.dialBridgeTLS(ctx, recordSize)
	if err != nil {
		return nil, nil, err
	}
	if err := b.CoalesceRecords(tc.ConnectionState()); err != nil {
		_ = tc.Close()
		return nil, nil, fmt.Errorf("bridge coalesce: %w", err)
	}
	return tc, tc, nil
}

// dialBridgeTLS connects to the bridge listener, runs the handshake through bridge.Client and
// StartPassthrough, and sends the stream request.
func (ts *transportSetup) dialBridgeTLS(ctx context.Context, recordSize int) (*tls.Conn, *bridge.Conn, error) {
	raw, err := dialLoopback(ctx, ts.bridgeAddr)
	if err != nil {
		return nil, nil, err
	}
	b, tc := bridge.Client(raw, ts.clientConfig(), bridge.Options{})
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = b.Close()
		return nil, nil, fmt.Errorf("bridge handshake: %w", err)
	}
	if err := b.StartPassthrough(); err != nil {
		_ = tc.Close()
		return nil, nil, fmt.Errorf("bridge passthrough: %w", err)
	}
	if err := sendStreamRequest(tc, recordSize); err != nil {
		_ = tc.Close()
		return nil, nil, err
	}
	return tc, b, nil
}
