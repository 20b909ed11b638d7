package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// childTDS is the child mode that serves the driver measurements: one tdstest server per TLS
// record size, all with the encryption setting OFF, so that encrypt=true gets full encryption
// and encrypt=disable none from the same server.
const childTDS = "tdstest"

// tdsServers is the set of tdstest servers of the driver child.
type tdsServers struct {
	servers map[int]*tdstest.Server // by record size
}

// startTDSServers parses "-record-sizes 0,1024,..." and starts a server for each size.
func startTDSServers(args []string, stderr io.Writer) (childServer, error) {
	fs := flag.NewFlagSet(childTDS, flag.ContinueOnError)
	fs.SetOutput(stderr)
	list := fs.String("record-sizes", "0", "comma-separated TLS record sizes, one server each")
	logToStderr := fs.Bool("log", false, "log every connection event to stderr")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var logf func(string, ...any) // nil: tdstest discards its log
	if *logToStderr {
		logf = func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) }
	}
	ts := &tdsServers{servers: map[int]*tdstest.Server{}}
	for _, f := range strings.Split(*list, ",") {
		rs, err := strconv.Atoi(f)
		if err != nil {
			_ = ts.Close()
			return nil, fmt.Errorf("record size %q: %w", f, err)
		}
		s, err := tdstest.NewServer(tdstest.Config{
			Encryption: tdstest.EncryptOff,
			RecordSize: rs,
			Logf:       logf,
		})
		if err != nil {
			_ = ts.Close()
			return nil, fmt.Errorf("start tdstest (record size %d): %w", rs, err)
		}
		ts.servers[rs] = s
	}
	return ts, nil
}

// info returns each server's DSN under driverInfoKey(record size).
func (ts *tdsServers) info() map[string]string {
	m := map[string]string{}
	for rs, s := range ts.servers {
		m[driverInfoKey(rs)] = s.DSN()
	}
	return m
}

// Close stops every server.
func (ts *tdsServers) Close() error {
	var errs []error
	for _, s := range ts.servers {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// startDriverChild starts the driver child with one server per record size; with log, the
// servers log every connection event to stderr.
func startDriverChild(recordSizes []int, log bool) (*child, error) {
	fs := make([]string, len(recordSizes))
	for i, rs := range recordSizes {
		fs[i] = strconv.Itoa(rs)
	}
	return startChild(childTDS, "-record-sizes", strings.Join(fs, ","), "-log="+strconv.FormatBool(log))
}
