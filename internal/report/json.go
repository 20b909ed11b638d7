package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// writeJSON encodes the report, every sample included, as indented JSON. Durations are
// nanoseconds (fields ending in _ns); summaries are in the units their names give.
func writeJSON(w io.Writer, r *report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("bench: encode JSON: %w", err)
	}
	return nil
}

// writeFile creates path and writes it with write, reporting the first error of either.
func writeFile(path string, r *report, write func(io.Writer, *report) error) error {
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
