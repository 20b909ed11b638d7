package bridge

import (
	"crypto/tls"
	"testing"
)

// TLSConfig clones, caps the version unless TLS 1.3 is
// allowed, turns off dynamic record sizing and never mutates its input.
func TestTLSConfig(t *testing.T) {
	tests := []struct {
		name       string
		in         *tls.Config
		allowTLS13 bool
		wantMax    uint16
	}{
		{"nil", nil, false, tls.VersionTLS12},
		{"nil, 1.3 allowed", nil, true, 0},
		{"unset max", &tls.Config{ServerName: "db"}, false, tls.VersionTLS12},
		{"max 1.3", &tls.Config{MaxVersion: tls.VersionTLS13}, false, tls.VersionTLS12},
		{"max 1.3 allowed", &tls.Config{MaxVersion: tls.VersionTLS13}, true, tls.VersionTLS13},
		{"lower max kept", &tls.Config{MaxVersion: tls.VersionTLS11}, false, tls.VersionTLS11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before *tls.Config
			if tt.in != nil {
				before = tt.in.Clone()
			}
			out := TLSConfig(tt.in, tt.allowTLS13)
			if out == tt.in {
				t.Fatal("returned the caller's config")
			}
			if out.MaxVersion != tt.wantMax {
				t.Fatalf("MaxVersion = %x, want %x", out.MaxVersion, tt.wantMax)
			}
			if !out.DynamicRecordSizingDisabled {
				t.Fatal("DynamicRecordSizingDisabled not set")
			}
			if tt.in != nil {
				if tt.in.MaxVersion != before.MaxVersion || tt.in.DynamicRecordSizingDisabled != before.DynamicRecordSizingDisabled {
					t.Fatal("the caller's config was modified")
				}
				if out.ServerName != tt.in.ServerName {
					t.Fatal("other fields not copied")
				}
			}
		})
	}
}
