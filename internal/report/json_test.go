package report_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

func TestWriteJSONRoundTrip(t *testing.T) {
	in := fakeReport()
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, in); err != nil {
		t.Fatal(err)
	}
	var out report.Report
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("output is not valid JSON: %v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(&out, in) {
		t.Errorf("JSON round trip differs:\nin  %+v\nout %+v", in, &out)
	}
	// Field names a reader of the file relies on.
	var raw map[string]any
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	cell := raw["cells"].([]any)[0].(map[string]any)
	arm := cell["arms"].([]any)[0].(map[string]any)
	s := arm["samples"].([]any)[0].(map[string]any)
	if s["wall_ns"].(float64) != 50e6 || s["bytes"].(float64) != 10<<20 {
		t.Errorf("first sample = %v: want wall_ns 5e7 and bytes %d", s, 10<<20)
	}
	if m := arm["cpu_ms_per_mib"].(map[string]any)["median"].(float64); m < 3.0999 || m > 3.1001 {
		t.Errorf("cpu_ms_per_mib median = %v, want 3.1", m)
	}
	if r := cell["ratios"].([]any)[0].(map[string]any); r["candidate"] != report.ArmBridgedTLS || r["lower"].(float64) != 5 {
		t.Errorf("first ratio = %v: want bridged TLS, lower 5", r)
	}
	if tg := raw["targets"].([]any); len(tg) != len(in.Targets) || tg[0].(map[string]any)["kind"] != "gain" {
		t.Errorf("targets = %v, want %d, the first of kind gain", tg, len(in.Targets))
	}
}
