// Command tdstest-server runs the tdstest embedded TDS server standalone, for poking at it with
// any SQL Server client:
//
//	go run ./tdstest/cmd/tdstest-server -addr 127.0.0.1:14330 -encrypt on -user sa -password P
//
// It prints the address, a go-mssqldb DSN and the CA file (for clients that verify the
// certificate), logs every connection, and runs until interrupted.
//
// The server listens only on loopback (-addr must be a loopback address). Inside a container,
// whose loopback the host cannot reach, -relay names a second address, any address, on which the
// command accepts connections and relays each, byte for byte, to the server; the image that
// docker/tdstest-server/Dockerfile builds uses it. -relay is meant for containers only: outside
// one it exposes a server with a well-known password beyond this machine.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:14330", "loopback address to listen on")
	encrypt := flag.String("encrypt", "on", "encryption setting: on, off, notsup or strict")
	user := flag.String("user", tdstest.DefaultUser, "user name to accept")
	password := flag.String("password", tdstest.DefaultPassword, "password to accept")
	cert := flag.String("cert", "ecdsa", "certificate: ecdsa, rsa or chain (over 4096 bytes)")
	recordSize := flag.Int("record-size", 0, "TLS record size in bytes (0: one record per TDS packet)")
	quiet := flag.Bool("q", false, "do not log connections")
	relayAddr := flag.String("relay", "", "for containers only: also accept connections on this address, which need not be loopback, and relay each to the server")
	flag.Parse()

	cfg := tdstest.Config{Addr: *addr, User: *user, Password: *password, RecordSize: *recordSize}
	switch *encrypt {
	case "on":
		cfg.Encryption = tdstest.EncryptOn
	case "off":
		cfg.Encryption = tdstest.EncryptOff
	case "notsup":
		cfg.Encryption = tdstest.EncryptNotSup
	case "strict":
		cfg.Encryption = tdstest.EncryptStrict
	default:
		log.Fatalf("tdstest-server: -encrypt %q: want on, off, notsup or strict", *encrypt)
	}
	switch *cert {
	case "ecdsa":
		cfg.Cert = tdstest.CertECDSA
	case "rsa":
		cfg.Cert = tdstest.CertRSA2048
	case "chain":
		cfg.Cert = tdstest.CertLargeChain
	default:
		log.Fatalf("tdstest-server: -cert %q: want ecdsa, rsa or chain", *cert)
	}
	if !*quiet {
		cfg.Logf = log.Printf
	}
	srv, err := tdstest.NewServer(cfg)
	if err != nil {
		log.Fatal(err)
	}
	dsnEncrypt := map[string]string{"on": "true", "off": "false", "notsup": "disable", "strict": "strict"}[*encrypt]
	fmt.Printf("address: %s\nDSN:     %s\nCA file: %s\n", srv.Addr,
		srv.DSN("encrypt="+dsnEncrypt, "certificate="+srv.CAFile(), "hostnameincertificate=localhost"), srv.CAFile())
	if *relayAddr != "" {
		ln, err := net.Listen("tcp", *relayAddr)
		if err != nil {
			_ = srv.Close()
			log.Fatalf("tdstest-server: -relay: %v", err)
		}
		defer ln.Close()
		go relay(ln, srv.Addr)
		fmt.Printf("relay:   %s -> %s\n", ln.Addr(), srv.Addr)
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
}
