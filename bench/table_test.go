package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := writeTable(&buf, fakeReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"machine: Test CPU, 2 CPUs",
		"median over rounds [p25-p75]",
		"== Driver: one SELECT of a 1 MiB value per query",
		// wall 50 ms / 10 ops = 5 ms; CPU per query = CPU per MiB (1 MiB per op)
		"native TLS     50       5.00 [5.00-5.00]",
		"3.10 [3.00-3.20]  129",
		"0.87 [0.84-0.90] 5/5 p=0.062",
		"0.93 [0.93-0.93] 5/5 p=0.062",
		"varbinary/4096: bridged plain / native plain = 0.931 (0.93 [0.93-0.93] 5/5 p=0.062), target <= 0.90: NOT MET",
		"varbinary/4096: bridged TLS / native TLS = 0.867 (0.87 [0.84-0.90] 5/5 p=0.062), target <= 0.87: MET",
		"== Transport only",
		"0.60 [0.60-0.60] 5/5 p=0.062",
		"== Floor",
		"AES <GCM> & co",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// x floor: bridge 0.9 / (0.2 + 0.3) ms per MiB.
	if row := lineWith(out, "  bridge  "); !strings.Contains(row, " 1.8x ") {
		t.Errorf("bridge transport row %q: want 1.8x floor", row)
	}
	// Transport shares: native (3.1-2.9)/3.1 = 6%, bridged (2.7-2.7)/2.7 = 0%; the sweep cell
	// has no plaintext arms, so "-".
	row := strings.Fields(lineWith(out, "varbinary/4096 ", "%"))
	if len(row) < 2 || row[len(row)-2] != "6%" || row[len(row)-1] != "0%" {
		t.Errorf("summary row %q: want shares 6%% and 0%% at the end", row)
	}
	sweep := strings.Fields(lineWith(out, "varbinary/4096, 1 KiB records", "0.75 ["))
	if len(sweep) < 2 || sweep[len(sweep)-1] != "-" || sweep[len(sweep)-2] != "-" {
		t.Errorf("sweep summary row %q: want '-' for both shares", sweep)
	}
}

func TestWriteTableOmitsEmptySections(t *testing.T) {
	r := fakeReport()
	r.Cells = r.cellsOf(groupTransport)
	r.Targets = nil
	var buf bytes.Buffer
	if err := writeTable(&buf, r); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"== Driver", "== Targets", "== Floor"} {
		if strings.Contains(buf.String(), absent) {
			t.Errorf("table has %q without such cells:\n%s", absent, buf.String())
		}
	}
}

func TestFmt(t *testing.T) {
	for _, tt := range []struct {
		x    float64
		want string
	}{{0.123, "0.12"}, {3.14159, "3.14"}, {12.34, "12.3"}, {1234.5, "1234"}, {0, "0.00"}} {
		if got := fmtNum(tt.x); got != tt.want {
			t.Errorf("fmtNum(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
	for _, tt := range []struct {
		p    float64
		want string
	}{{1, "1"}, {0.0625, "0.062"}, {0.5, "0.5"}, {0.0004, "<0.001"}} {
		if got := fmtP(tt.p); got != tt.want {
			t.Errorf("fmtP(%v) = %q, want %q", tt.p, got, tt.want)
		}
	}
	if got := fmtStat(summary{}); got != "-" {
		t.Errorf("fmtStat(empty) = %q, want -", got)
	}
	if got := fmtRatio(nil); got != "-" {
		t.Errorf("fmtRatio(nil) = %q, want -", got)
	}
}

// lineWith returns the first line of s that contains every one of subs, or "".
func lineWith(s string, subs ...string) string {
next:
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if !strings.Contains(l, sub) {
				continue next
			}
		}
		return l
	}
	return ""
}
