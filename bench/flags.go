package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// Modes of the measuring run (-mode).
const (
	modeDriver    = "driver"
	modeTransport = "transport"
	modeAll       = "all"
	modeFaults    = "faults" // the fault table (faults.go), not a CPU measurement
)

// config is the parsed command line.
type config struct {
	jsonPath string         // -json: write every sample and summary as JSON here
	plotPath string         // -plot: write an SVG bar chart here
	dsn      string         // -dsn or MSSQL_DSN: driver comparison against this server
	duration time.Duration  // -duration: measuring time budget of the whole run
	rounds   int            // -rounds: rounds per cell
	mode     string         // -mode: driver, transport, all or faults
	size     int            // -size: bytes of the value each driver query returns (and of the upload)
	rows     int64          // -rows: rows per many-row query and per CopyIn
	idleN    int            // -idle-conns: pooled connections of the idle heap figure
	idleR    int            // -idle-rounds: rounds of the idle heap figure (0: skip it)
	cells    *regexp.Regexp // -cells: measure only cells whose "group name" matches
	arms     *regexp.Regexp // -arms: measure only arms whose name matches
	cpuProf  string         // -cpuprofile: write a CPU profile of the measuring phase here
	verbose  bool           // -v: the driver servers log every connection event to stderr
	control  bool           // -control: every bridged arm is a second native connection (see armSpecs)

	faultRepeat int // -fault-repeat: counted queries per idle cell of -mode faults

	serve      bool   // -serve: run the tdstest server standalone
	addr       string // -addr: listen address for -serve
	encrypt    string // -encrypt: on, off, notsup or strict for -serve
	user       string // -user for -serve
	password   string // -password for -serve
	recordSize int    // -record-size: TLS record size of -serve (0: one record per packet)
}

// errUsage reports a bad command line; the flag package has already printed why.
var errUsage = errors.New("bench: usage")

// parseFlags parses args (without the program name). getenv supplies MSSQL_DSN.
func parseFlags(args []string, stderr io.Writer, getenv func(string) string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.jsonPath, "json", "", "write machine-readable results (every sample) to `FILE`")
	fs.StringVar(&c.plotPath, "plot", "", "write an SVG chart of client CPU per MiB to `FILE.svg`")
	fs.StringVar(&c.dsn, "dsn", getenv("MSSQL_DSN"), "run the driver comparison against this server `DSN` (default $MSSQL_DSN)")
	fs.DurationVar(&c.duration, "duration", 200*time.Second, "measuring time budget of the whole run (setup comes on top)")
	fs.IntVar(&c.rounds, "rounds", 20, "rounds per cell; every round visits every arm of every cell")
	fs.StringVar(&c.mode, "mode", modeAll, "what to measure: driver, transport or all; or faults: the fault table (see bench/README.md)")
	fs.IntVar(&c.faultRepeat, "fault-repeat", 5, "with -mode faults: counted queries of each idle-connection cell (each idles 1 s; 100 for the target run)")
	fs.IntVar(&c.size, "size", 1<<20, "`bytes` of the value each driver query returns (even, >= 2)")
	fs.Int64Var(&c.rows, "rows", 100000, "rows per many-row query and per CopyIn of the workload cells")
	fs.IntVar(&c.idleN, "idle-conns", 200, "pooled connections of the idle heap figure")
	fs.IntVar(&c.idleR, "idle-rounds", 3, "rounds of the idle heap figure (0: skip it)")
	cellsRe := fs.String("cells", "", "measure only the cells whose \"group name\" matches this `regexp` (e.g. 'driver varbinary/4096$')")
	armsRe := fs.String("arms", "", "measure only the arms whose name matches this `regexp` (e.g. 'TLS')")
	fs.StringVar(&c.cpuProf, "cpuprofile", "", "write a CPU profile of the measuring phase to `FILE`, samples labelled by cell and arm (go tool pprof -tagfocus 'arm=bridged TLS')")
	fs.BoolVar(&c.control, "control", false, "control run (with -mode driver): connect the bridged arms with go-mssqldb's own transport too, so every ratio compares two identical arms and shows what noise alone gives")
	fs.BoolVar(&c.verbose, "v", false, "let the driver servers (tdstest) log every connection event to stderr")
	fs.BoolVar(&c.serve, "serve", false, "run the embedded tdstest server standalone and print its address and DSN")
	fs.StringVar(&c.addr, "addr", "127.0.0.1:14330", "listen address for -serve (a loopback IP and port)")
	fs.StringVar(&c.encrypt, "encrypt", "on", "server encryption setting for -serve: on, off, notsup or strict")
	fs.StringVar(&c.user, "user", "sa", "login user for -serve")
	fs.StringVar(&c.password, "password", "tdstest-Passw0rd", "login password for -serve")
	fs.IntVar(&c.recordSize, "record-size", 0, "TLS record size in `bytes` for -serve (0: one record per TDS packet)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./bench [flags]\n\n"+
			"Measures client CPU per MiB for go-mssqldb with its own TLS versus the bridge (see bench/doc.go).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, errUsage
	}
	for _, re := range []struct {
		flag, expr string
		dst        **regexp.Regexp
	}{{"-cells", *cellsRe, &c.cells}, {"-arms", *armsRe, &c.arms}} {
		if re.expr == "" {
			continue
		}
		var err error
		if *re.dst, err = regexp.Compile(re.expr); err != nil {
			fmt.Fprintf(stderr, "bench: %s: %v\n", re.flag, err)
			return nil, errUsage
		}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected arguments: %q\n", fs.Args())
		return nil, errUsage
	}
	if err := c.check(); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, errUsage
	}
	return c, nil
}

// check validates the combination of flags.
func (c *config) check() error {
	switch c.mode {
	case modeDriver, modeTransport, modeAll, modeFaults:
	default:
		return fmt.Errorf("bench: -mode %q: want driver, transport, all or faults", c.mode)
	}
	if c.faultRepeat < 1 || c.faultRepeat > 10000 {
		return fmt.Errorf("bench: -fault-repeat %d: want 1..10000", c.faultRepeat)
	}
	if c.rounds < 1 {
		return fmt.Errorf("bench: -rounds %d: want at least 1", c.rounds)
	}
	if c.duration <= 0 {
		return fmt.Errorf("bench: -duration %v: want a positive duration", c.duration)
	}
	if c.size < 2 || c.size%2 != 0 {
		return fmt.Errorf("bench: -size %d: want an even number of bytes >= 2", c.size)
	}
	if c.control && c.mode != modeDriver {
		return fmt.Errorf("bench: -control needs -mode driver (the transport arms have no second native arm)")
	}
	if c.rows < 1 {
		return fmt.Errorf("bench: -rows %d: want at least 1", c.rows)
	}
	if c.idleN < 1 || c.idleN > 1000 {
		return fmt.Errorf("bench: -idle-conns %d: want 1..1000", c.idleN)
	}
	if c.idleR < 0 {
		return fmt.Errorf("bench: -idle-rounds %d: want 0 or more", c.idleR)
	}
	if c.recordSize < 0 || c.recordSize > 16384 {
		return fmt.Errorf("bench: -record-size %d: want 0..16384", c.recordSize)
	}
	if c.serve {
		switch c.encrypt {
		case "on", "off", "notsup", "strict":
		default:
			return fmt.Errorf("bench: -encrypt %q: want on, off, notsup or strict", c.encrypt)
		}
	}
	return nil
}

// wantIdle says whether the run measures the idle heap figure (driver mode, -idle-rounds > 0,
// and -cells, if given, matching its name).
func (c *config) wantIdle() bool {
	return c.wantDriver() && c.idleR > 0 && (c.cells == nil || c.cells.MatchString(report.GroupIdle+" "+idleCellName))
}

// wantDriver and wantTransport say which parts of the run the mode selects.
func (c *config) wantDriver() bool    { return c.mode == modeDriver || c.mode == modeAll }
func (c *config) wantTransport() bool { return c.mode == modeTransport || c.mode == modeAll }

// osGetenv is os.Getenv, named for the call sites that pass it.
var osGetenv = os.Getenv
