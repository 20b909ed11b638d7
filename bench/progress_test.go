package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestProgressNamesTheCell checks that a log (not a terminal) gets a line each time the round or
// the cell changes, each naming the cell and arm that start, and no line for another arm of the
// same cell.
func TestProgressNamesTheCell(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf}
	p.begin(6)
	p.step("driver round 1/2", "nvarchar/4096", "native TLS")
	p.step("driver round 1/2", "nvarchar/4096", "bridged TLS")
	p.step("driver round 1/2", "upload 1 MiB varbinary(max) parameter", "native TLS")
	p.step("driver round 1/2", "upload 1 MiB varbinary(max) parameter", "bridged TLS")
	p.step("driver round 2/2", "upload 1 MiB varbinary(max) parameter", "bridged TLS")
	p.step("driver round 2/2", "nvarchar/4096", "native TLS")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := []string{
		"bench: driver round 1/2, nvarchar/4096, native TLS (step 1/6,",
		"bench: driver round 1/2, upload 1 MiB varbinary(max) parameter, native TLS (step 3/6,",
		"bench: driver round 2/2, upload 1 MiB varbinary(max) parameter, bridged TLS (step 5/6,",
		"bench: driver round 2/2, nvarchar/4096, native TLS (step 6/6,",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i+1, lines[i], w)
		}
	}
}

// TestProgressTerminalWidth checks that on a terminal every step rewrites the line, never wider
// than ttyWidth, and blanks out what a longer line before it left.
func TestProgressTerminalWidth(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf, tty: true}
	p.begin(2)
	p.step("driver round 1/20", "upload 1 MiB varbinary(max) parameter", "bridged plain")
	p.step("driver round 1/20", "CopyIn", "native TLS")
	writes := strings.Split(buf.String(), "\r")[1:]
	if len(writes) != 2 {
		t.Fatalf("%d rewrites, want 2: %q", len(writes), buf.String())
	}
	for _, w := range writes {
		if n := utf8.RuneCountInString(w); n > ttyWidth {
			t.Errorf("line of %d columns, want at most %d: %q", n, ttyWidth, w)
		}
	}
	if !strings.Contains(writes[0], "upload 1 MiB varbinary(max) parameter, bridged") || !strings.HasSuffix(writes[0], "…") {
		t.Errorf("long line %q: want the cell named and the rest cut", writes[0])
	}
	if !strings.Contains(writes[1], "CopyIn, native TLS (step 2/2,") || utf8.RuneCountInString(writes[1]) != utf8.RuneCountInString(writes[0]) {
		t.Errorf("second line %q: want the new cell, padded to blank the first", writes[1])
	}
}
