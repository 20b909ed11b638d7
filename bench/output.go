package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// writeFile creates path and writes the report to it with write (report.WriteJSON,
// report.WriteSVG), returning the first error of either.
func writeFile(path string, r *report.Report, write func(io.Writer, *report.Report) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := write(f, r); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// writePlotFile writes the SVG chart to path; only .svg files are supported.
func writePlotFile(path string, r *report.Report) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".svg" {
		return fmt.Errorf("bench: -plot %s: only .svg is supported (got %q)", path, ext)
	}
	return writeFile(path, r, report.WriteSVG)
}
