package mssqlbridge

import (
	"regexp"
	"testing"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// TestErrorTextAsNative: an error after the handshake reads the same through the bridge as
// through go-mssqldb's own transport: the bridge hands the driver the socket's own error, not
// one wrapped with its state, so applications and logs that match error text see no
// difference. The server cuts a 1 MiB result with a FIN or a RST, in TLS and in plaintext;
// addresses are masked, since each transport has its own socket.
func TestErrorTextAsNative(t *testing.T) {
	addr := regexp.MustCompile(`127\.0\.0\.1:\d+`)
	for _, m := range tdstest.Modes() {
		for _, a := range []tdstest.Action{tdstest.ActionClose, tdstest.ActionReset} {
			t.Run(m.Name+"/"+a.String(), func(t *testing.T) {
				texts := map[string]string{}
				for _, tr := range dbArms {
					cfg := m.Config
					cfg.Faults = tdstest.Faults{At: tdstest.PhaseResult, Action: a, Conn: 1, Times: 1}
					srv := startServer(t, cfg)
					db, err := tr.open(t, srv.DSN("encrypt="+m.Encrypt, "certificate="+srv.CAFile(), "hostnameincertificate=localhost"))
					if err != nil {
						t.Fatal(err)
					}
					err = queryCtx(db, true)
					if err == nil {
						t.Fatalf("%s: the query the server cut succeeded", tr.name)
					}
					texts[tr.name] = addr.ReplaceAllString(err.Error(), "ADDR")
				}
				if texts["bridged"] != texts["native"] {
					t.Fatalf("bridged: %q\nnative:  %q", texts["bridged"], texts["native"])
				}
				t.Log(texts["bridged"])
			})
		}
	}
}
