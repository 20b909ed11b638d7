package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// childFaults is the child mode that serves the fault table: one tdstest server per fault
// cell (faultCells), each with its scenario's Faults.
const childFaults = "faults"

// faultServers is the set of servers of the faults child, by cell key.
type faultServers struct {
	servers map[string]*tdstest.Server
	cells   map[string]faultCell
}

// startFaultServers starts a server for every fault cell; it takes no arguments.
func startFaultServers(args []string, _ io.Writer) (childServer, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", args)
	}
	return newFaultServers(faultCells())
}

// newFaultServers starts a server for each cell (in process: the child, and the tests).
func newFaultServers(cells []faultCell) (*faultServers, error) {
	fs := &faultServers{servers: map[string]*tdstest.Server{}, cells: map[string]faultCell{}}
	for _, c := range cells {
		s, err := tdstest.NewServer(c.serverConfig())
		if err != nil {
			_ = fs.Close()
			return nil, fmt.Errorf("start tdstest for %s: %w", c.key(), err)
		}
		fs.servers[c.key()] = s
		fs.cells[c.key()] = c
	}
	return fs, nil
}

// dsn returns the DSN of the cell's server: encrypt as the cell says, and for TLS the server's
// certificate trusted (the certificate file is the server's, so it lives as long as the server).
func (fs *faultServers) dsn(c faultCell) (string, error) {
	s, ok := fs.servers[c.key()]
	if !ok {
		return "", fmt.Errorf("bench: no fault server for %s", c.key())
	}
	params := append([]string{"encrypt=" + c.encrypt}, c.sc.params...)
	if c.encrypt != encPlain {
		params = append(params, "certificate="+s.CAFile())
	}
	return s.DSN(params...), nil
}

// info returns every cell's DSN under its key.
func (fs *faultServers) info() map[string]string {
	m := map[string]string{}
	for k, c := range fs.cells {
		m[k], _ = fs.dsn(c)
	}
	return m
}

// Close stops every server; the connections of calls still blocked on them end.
func (fs *faultServers) Close() error {
	var errs []error
	for _, s := range fs.servers {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
