package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// faultReport is what -mode faults prints and what its -json writes.
type faultReport struct {
	Date          string      `json:"date"`
	CPUModel      string      `json:"cpu_model"`
	NumCPU        int         `json:"num_cpu"`
	GOMAXPROCS    int         `json:"gomaxprocs"`
	GoVersion     string      `json:"go_version"`
	DriverVersion string      `json:"driver_version"`
	Repeat        int         `json:"fault_repeat"` // counted queries per idle cell
	Elapsed       string      `json:"elapsed"`
	Rows          []*faultRow `json:"rows"`
	StillRunning  []string    `json:"still_running,omitempty"` // calls that had not returned when the run ended
}

// runFaults is -mode faults: the servers in a child process, every cell at once, then the table
// on stdout and, with -json, the report.
func runFaults(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	start := time.Now()
	rep := &faultReport{
		Date:          start.UTC().Format("2006-01-02 15:04 MST"),
		CPUModel:      cpuModel(),
		NumCPU:        runtime.NumCPU(),
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		GoVersion:     runtime.Version(),
		DriverVersion: moduleVersion(mssqlModule),
		Repeat:        cfg.faultRepeat,
	}
	ch, err := startChild(childFaults)
	if err != nil {
		return err
	}
	cells := faultCells()
	fmt.Fprintf(stderr, "bench: faults: %d cells at once, %d counted queries per idle cell\n", len(cells), cfg.faultRepeat)
	rows, pending, err := runFaultCells(ctx, cells, func(c faultCell) (string, error) { return ch.get(c.key()) }, cfg.faultRepeat)
	// Closing the child closes its servers, which ends the connections of blocked calls.
	if cerr := ch.close(); err == nil {
		err = cerr
	}
	rep.StillRunning = waitPending(pending, 10*time.Second)
	if err != nil {
		return err
	}
	rep.Rows = rows
	rep.Elapsed = time.Since(start).Round(time.Second).String()
	if err := writeFaultTable(stdout, rep); err != nil {
		return err
	}
	if cfg.jsonPath != "" {
		return writeFaultJSON(cfg.jsonPath, rep)
	}
	return nil
}

// writeFaultTable prints the fault table.
func writeFaultTable(w io.Writer, r *faultReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	p("tdsbridge faults, %s\n", r.Date)
	p("machine: %s, %d CPUs, GOMAXPROCS %d, %s; driver: go-mssqldb %s\n", r.CPUModel, r.NumCPU, r.GOMAXPROCS, r.GoVersion, r.DriverVersion)
	p("run: %d counted queries per idle cell, took %s\n", r.Repeat, r.Elapsed)
	p("database/sql, default pool, DSN timeouts only where a scenario names them; native = sql.Open(\"sqlserver\"), bridged = sql.Open(\"tdsbridge\"); servers: tdstest in a child process\n")
	p("bound = the context deadline of each call; returned in = the longest call; queries/errors = calls run (or given up on) / calls that returned an error\n\n")
	p("scenario\tencryption\ttransport\tbound\treturned in\tapp error\tqueries/errors\terror (first line)\n")
	for _, row := range r.Rows {
		name := row.Scenario + ". " + row.Name
		if row.Step != "" {
			name += ": " + row.Step
		}
		returned := row.Returned.Round(time.Millisecond).String()
		if row.Returned < time.Millisecond {
			returned = "<1ms"
		}
		appErr := "no"
		if row.Errors > 0 {
			appErr = "yes"
		}
		if row.Blocked {
			returned = "still blocked after " + row.Returned.String()
			appErr = "blocked"
			if row.Errors > 0 {
				appErr = "yes, then blocked"
			}
		}
		e := row.Error
		if e == "" {
			e = "-"
		}
		p("%s\t%s\t%s\t%v\t%s\t%s\t%d/%d\t%s\n", name, row.Encryption, row.Transport, row.Bound, returned, appErr, row.Queries, row.Errors, e)
	}
	if len(r.StillRunning) > 0 {
		p("\nstill running 10 s after their servers closed: %s\n", strings.Join(r.StillRunning, ", "))
	}
	return tw.Flush()
}

// writeFaultJSON writes the report as indented JSON to path.
func writeFaultJSON(path string, r *faultReport) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		_ = f.Close()
		return fmt.Errorf("bench: encode JSON: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}
