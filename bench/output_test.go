package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestWritePlotFileRejectsOtherFormats(t *testing.T) {
	err := writePlotFile(filepath.Join(t.TempDir(), "x.png"), fakeReport())
	if err == nil || !strings.Contains(err.Error(), "only .svg") {
		t.Errorf("writePlotFile(.png) = %v, want an only-.svg error", err)
	}
}
