package tdstest

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestParseRoute(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    route
		wantErr string
	}{
		"name":        {in: "replica.example.com:11433", want: route{"replica.example.com", 11433}},
		"instance":    {in: `host\INST:1433`, want: route{`host\INST`, 1433}},
		"ipv6":        {in: "[::1]:1", want: route{"::1", 1}},
		"no port":     {in: "host", wantErr: "missing port"},
		"port 0":      {in: "host:0", wantErr: "port of 1 to 65535"},
		"port large":  {in: "host:65536", wantErr: "port of 1 to 65535"},
		"empty host":  {in: ":1433", wantErr: "port of 1 to 65535"},
		"port letter": {in: "host:x", wantErr: "port of 1 to 65535"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseRoute(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseRoute(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
	if _, err := NewServer(Config{RouteTo: "nowhere"}); err == nil {
		t.Fatal("NewServer accepted RouteTo without a port")
	}
}

func TestEnvChangeRoutingBytes(t *testing.T) {
	got := appendEnvChangeRouting(nil, route{"ab", 0x1234})
	want := []byte{
		0xE3, 0x0E, 0x00, // ENVCHANGE, length 14
		0x14,       // type 20: routing
		0x09, 0x00, // RoutingDataValueLength 9
		0x00,       // Protocol: TCP
		0x34, 0x12, // ProtocolProperty: port 0x1234
		0x02, 0x00, 'a', 0x00, 'b', 0x00, // AlternateServer: 2 characters, UCS-2
		0x00, 0x00, // OldValue: empty
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("routing ENVCHANGE\n got % x\nwant % x", got, want)
	}
}

// TestRoutingGoMSSQLDB: go-mssqldb follows the routing ENVCHANGE to the second server. The
// first server closes the connection after routing, so the query can only succeed there.
func TestRoutingGoMSSQLDB(t *testing.T) {
	target, err := NewServer(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = target.Close() })
	_, port, _ := strings.Cut(target.Addr, ":")
	var (
		mu   sync.Mutex
		logs bytes.Buffer
	)
	front, err := NewServer(Config{RouteTo: "localhost:" + port, Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&logs, f+"\n", a...)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = front.Close() })
	checkQueries(t, openMSSQL(t, front.DSN("encrypt=true", "TrustServerCertificate=true")))
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "routed to") {
		t.Fatalf("the front server did not route: %s", logs.String())
	}
}
