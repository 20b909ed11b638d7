package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit code: 0 done, 1 failed, 2 bad command line.
// stdin matters only in child mode (its EOF stops the child).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == childFlag {
		return runChild(args[1:], stdin, stdout, stderr)
	}
	cfg, err := parseFlags(args, stderr, osGetenv)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.mode == modeFaults && !cfg.serve {
		if err := runFaults(ctx, cfg, stdout, stderr); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	}
	if cfg.serve {
		if err := runServe(ctx, cfg, stdout, stderr); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	}
	rep, err := runBench(ctx, cfg, newProgress(stderr))
	code := 0
	if err != nil {
		fmt.Fprintln(stderr, err)
		code = 1
		if rep == nil {
			return code
		}
		fmt.Fprintln(stderr, "bench: the run stopped early; the figures below are from the samples taken before")
	}
	if err := report.WriteTable(stdout, rep); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if cfg.jsonPath != "" {
		if err := writeFile(cfg.jsonPath, rep, report.WriteJSON); err != nil {
			fmt.Fprintln(stderr, err)
			code = 1
		}
	}
	if cfg.plotPath != "" {
		if err := writePlotFile(cfg.plotPath, rep); err != nil {
			fmt.Fprintln(stderr, err)
			code = 1
		}
	}
	return code
}

// runBench sets up every cell the configuration asks for (servers in child processes,
// connections), measures them in rounds and returns the report. Everything it started is
// stopped before it returns. If measuring fails or is interrupted, it returns the report of the
// samples taken so far along with the error; a setup failure returns no report.
func runBench(ctx context.Context, cfg *config, prog *progress) (rep *report.Report, err error) {
	start := time.Now()
	rep = &report.Report{
		Date:          start.UTC().Format("2006-01-02 15:04 MST"),
		PID:           os.Getpid(),
		CPUModel:      cpuModel(),
		NumCPU:        runtime.NumCPU(),
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		GoVersion:     runtime.Version(),
		DriverVersion: moduleVersion(mssqlModule),
		Mode:          cfg.mode,
		Control:       cfg.control,
		Rounds:        cfg.rounds,
		Budget:        cfg.duration.String(),
		ValueBytes:    cfg.size,
	}
	var cells []*cellRunner
	var idleTarget *driverTarget // the driver server, for the idle heap figure
	var closers []func() error   // run in reverse order on the way out
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if cerr := closers[i](); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	if cfg.wantDriver() {
		prog.note("starting the driver servers and connections")
		dcells, base, server, closeFn, err := driverCells(ctx, cfg, prog)
		if err != nil {
			return nil, err
		}
		idleTarget = &base
		rep.Server = server
		closers = append(closers, closeFn)
		cells = append(cells, dcells...)
	}
	if cfg.wantTransport() {
		prog.note("starting the transport child")
		ch, err := startChild(childStreams)
		if err != nil {
			return nil, err
		}
		closers = append(closers, ch.close)
		ts, err := newTransportSetup(ch)
		if err != nil {
			return nil, err
		}
		cells = append(cells, ts.transportCells()...)
		fcells, err := floorCells(ts)
		if err != nil {
			return nil, err
		}
		cells = append(cells, fcells...)
	}
	cells = filterCells(cells, cfg.cells, cfg.arms)
	stopProfile, err := startCPUProfile(cfg.cpuProf)
	if err != nil {
		return nil, err
	}
	err = runRounds(ctx, cells, cfg.rounds, cfg.duration, prog)
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if err == nil && idleTarget != nil && cfg.wantIdle() {
		rep.Idle, err = measureIdle(ctx, cfg, *idleTarget, prog)
	}
	for _, c := range cells {
		rep.Cells = append(rep.Cells, c.result)
	}
	rep.Targets = checkTargets(rep)
	rep.Worse, rep.RatiosChecked = worseCells(rep)
	rep.Verdict = conclude(rep)
	rep.Elapsed = time.Since(start).Round(time.Second).String()
	return rep, err
}

// startCPUProfile starts a CPU profile into path (nothing if path is empty) and returns the
// function that stops it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("bench: -cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("bench: -cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("bench: -cpuprofile: %w", err)
		}
		return nil
	}, nil
}
