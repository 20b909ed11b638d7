package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// serveEncrypt maps -encrypt to the tdstest configuration and to the encrypt parameter a
// go-mssqldb client should use with it.
func serveEncrypt(cfg *tdstest.Config, setting string) (clientEncrypt string, err error) {
	switch setting {
	case "on":
		return "true", nil
	case "off":
		cfg.Encryption = tdstest.EncryptOff
		return "false", nil
	case "notsup":
		cfg.Encryption = tdstest.EncryptNotSup
		return "disable", nil
	case "strict":
		cfg.Encryption = tdstest.EncryptStrict
		return "strict", nil
	}
	return "", fmt.Errorf("bench: -encrypt %q: want on, off, notsup or strict", setting)
}

// runServe runs the tdstest server standalone on -addr (a loopback address) until ctx ends
// (Ctrl-C), and prints the address, a go-mssqldb DSN and the CA file for clients. The server's
// log goes to stderr.
func runServe(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	tcfg := tdstest.Config{Addr: cfg.addr, User: cfg.user, Password: cfg.password, RecordSize: cfg.recordSize, Logf: logf}
	encrypt, err := serveEncrypt(&tcfg, cfg.encrypt)
	if err != nil {
		return err
	}
	s, err := tdstest.NewServer(tcfg)
	if err != nil {
		return fmt.Errorf("bench: -serve: %w", err)
	}
	defer s.Close()
	params := []string{"encrypt=" + encrypt}
	if encrypt != "disable" {
		params = append(params, "certificate="+s.CAFile())
	}
	fmt.Fprintf(stdout, "tdstest listening on %s (encryption %s, user %s, record size %d)\n", s.Addr, cfg.encrypt, cfg.user, cfg.recordSize)
	fmt.Fprintf(stdout, "DSN: %s\n", s.DSN(params...))
	fmt.Fprintf(stdout, "CA file: %s\n", s.CAFile())
	fmt.Fprintln(stdout, "Ctrl-C stops it.")
	<-ctx.Done()
	return nil
}
