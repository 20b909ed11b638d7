package bridge_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/testcert"
)

// A client and a server run TLS inside PRELOGIN packets over an in-memory
// connection, switch to passthrough, and the server's reply comes back
// through the coalescing Reader.
func Example() {
	cert, pool := exampleCert()
	craw, sraw := net.Pipe()

	go func() {
		sb, ts := bridge.Server(sraw, &tls.Config{Certificates: []tls.Certificate{cert}}, bridge.Options{})
		defer sb.Close()
		if err := ts.Handshake(); err != nil {
			fmt.Println("server:", err)
			return
		}
		if err := sb.StartPassthrough(); err != nil {
			fmt.Println("server:", err)
			return
		}
		ts.Write([]byte("hello from the server"))
		ts.Close()
	}()

	cb, tc := bridge.Client(craw, &tls.Config{RootCAs: pool, ServerName: "localhost"}, bridge.Options{})
	defer cb.Close()
	if err := tc.Handshake(); err != nil {
		fmt.Println("client:", err)
		return
	}
	if err := cb.StartPassthrough(); err != nil {
		fmt.Println("client:", err)
		return
	}
	msg, err := io.ReadAll(bridge.NewReader(tc, cb, 64<<10))
	fmt.Println(cb.State(), tls.VersionName(tc.ConnectionState().Version), string(msg), err)
	// Output: passthrough TLS 1.2 hello from the server <nil>
}

// exampleCert returns a self-signed ECDSA certificate for localhost and a
// pool that trusts it.
func exampleCert() (tls.Certificate, *x509.CertPool) {
	cert, pool, err := testcert.SelfSigned(testcert.LeafOptions{})
	if err != nil {
		panic(err)
	}
	return cert, pool
}

// A client that reads its tls.Conn directly (as a database driver reads a
// packet header, then its body) asks the bridge to coalesce records, so
// that crypto/tls reads the bridge once per batch of records.
func ExampleConn_CoalesceRecords() {
	cert, pool := exampleCert()
	craw, sraw := net.Pipe()

	go func() {
		sb, ts := bridge.Server(sraw, &tls.Config{Certificates: []tls.Certificate{cert}}, bridge.Options{})
		defer sb.Close()
		if err := ts.Handshake(); err != nil || sb.StartPassthrough() != nil {
			fmt.Println("server: handshake failed")
			return
		}
		for _, rec := range []string{"header", "body of the first packet", "header", "body of the second"} {
			ts.Write([]byte(rec))
		}
		ts.Close()
	}()

	cb, tc := bridge.Client(craw, &tls.Config{RootCAs: pool, ServerName: "localhost"}, bridge.Options{})
	defer cb.Close()
	if err := tc.Handshake(); err != nil {
		fmt.Println("client:", err)
		return
	}
	if err := cb.StartPassthrough(); err != nil {
		fmt.Println("client:", err)
		return
	}
	if err := cb.CoalesceRecords(tc.ConnectionState()); err != nil {
		fmt.Println("client:", err)
		return
	}
	msg, err := io.ReadAll(tc)
	fmt.Println(string(msg), err)
	// Output: headerbody of the first packetheaderbody of the second <nil>
}
