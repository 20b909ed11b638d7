package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON encodes the report, every sample included, as indented JSON to w, in one Write of
// the encoder. Durations are nanoseconds (fields ending in _ns); summaries are in the units their
// names give.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("report: encode JSON: %w", err)
	}
	return nil
}
