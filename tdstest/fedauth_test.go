package tdstest

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// fedAuthFeature builds a FEDAUTH FeatureExt entry (FeatureId, length, data) for the
// security-token library: options (library << 1 | echo), token length, UCS-2 token, extra.
func fedAuthFeature(library uint8, echo bool, token string, extra []byte) []byte {
	opt := library << 1
	if echo {
		opt |= 1
	}
	tok := ucs2.Append(nil, token)
	data := []byte{opt}
	if library == fedAuthLibrarySecurityToken {
		data = binary.LittleEndian.AppendUint32(data, uint32(len(tok)))
		data = append(data, tok...)
	}
	data = append(data, extra...)
	b := []byte{featureFedAuth}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

func TestParseLogin7FedAuth(t *testing.T) {
	nonce := make([]byte, fedAuthNonceLen)
	tests := map[string]struct {
		feature []byte
		want    *fedAuthLogin
		wantErr string
	}{
		"token": {
			feature: fedAuthFeature(fedAuthLibrarySecurityToken, true, "eyJ0eXAi", nil),
			want:    &fedAuthLogin{Library: fedAuthLibrarySecurityToken, Echo: true, Token: "eyJ0eXAi"},
		},
		"token and nonce": {
			feature: fedAuthFeature(fedAuthLibrarySecurityToken, false, "t", nonce),
			want:    &fedAuthLogin{Library: fedAuthLibrarySecurityToken, Token: "t", HasNonce: true},
		},
		"after another feature": {
			feature: append([]byte{0x0A, 1, 0, 0, 0, 0x01}, fedAuthFeature(fedAuthLibrarySecurityToken, false, "abc", nil)...),
			want:    &fedAuthLogin{Library: fedAuthLibrarySecurityToken, Token: "abc"},
		},
		"ADAL": {
			feature: fedAuthFeature(fedAuthLibraryADAL, true, "", []byte{0x01}),
			want:    &fedAuthLogin{Library: fedAuthLibraryADAL, Echo: true},
		},
		"no FEDAUTH": {feature: []byte{0x0A, 1, 0, 0, 0, 0x01}},
		"empty data": {
			feature: []byte{featureFedAuth, 0, 0, 0, 0},
			wantErr: "no options byte",
		},
		"short length": {
			feature: []byte{featureFedAuth, 3, 0, 0, 0, fedAuthLibrarySecurityToken << 1, 1, 0},
			wantErr: "want a 4-byte length",
		},
		"token longer than data": {
			feature: []byte{featureFedAuth, 7, 0, 0, 0, fedAuthLibrarySecurityToken << 1, 9, 0, 0, 0, 'a', 0},
			wantErr: "security token length 9",
		},
		"odd token length": {
			feature: []byte{featureFedAuth, 6, 0, 0, 0, fedAuthLibrarySecurityToken << 1, 1, 0, 0, 0, 'a'},
			wantErr: "security token length 1",
		},
		"trailing bytes": {
			feature: fedAuthFeature(fedAuthLibrarySecurityToken, false, "t", []byte{1, 2, 3}),
			wantErr: "followed by 3 bytes",
		},
		"ADAL without workflow": {
			feature: fedAuthFeature(fedAuthLibraryADAL, false, "", nil),
			wantErr: "want the workflow byte",
		},
		"unknown library": {
			feature: fedAuthFeature(0x05, false, "", nil),
			wantErr: "library 0x05 unknown",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := goodLogin7()
			in.featureExt = tc.feature
			l, err := parseLogin7(encodeLogin7(in))
			if tc.wantErr != "" {
				if !errors.Is(err, errLogin7) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want errLogin7 mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == nil && l.FedAuth != nil:
				t.Fatalf("FedAuth = %+v, want none", l.FedAuth)
			case tc.want != nil && (l.FedAuth == nil || *l.FedAuth != *tc.want):
				t.Fatalf("FedAuth = %+v, want %+v", l.FedAuth, tc.want)
			}
		})
	}
}

func FuzzDecodeFedAuth(f *testing.F) {
	f.Add(fedAuthFeature(fedAuthLibrarySecurityToken, true, "token", nil)[5:])
	f.Add(fedAuthFeature(fedAuthLibrarySecurityToken, false, "t", make([]byte, fedAuthNonceLen))[5:])
	f.Add([]byte{fedAuthLibraryADAL << 1, 1})
	f.Add([]byte{fedAuthLibrarySecurityToken << 1, 0xFF, 0xFF, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, d []byte) {
		fa, err := decodeFedAuth(d)
		if err != nil {
			if !errors.Is(err, errLogin7) {
				t.Fatalf("error %v does not wrap errLogin7", err)
			}
			return
		}
		if fa.Library != fedAuthLibrarySecurityToken && fa.Library != fedAuthLibraryADAL {
			t.Fatalf("library %#x accepted", fa.Library)
		}
		if len(fa.Token)/3 > len(d) {
			t.Fatalf("token of %d bytes from %d bytes of data", len(fa.Token), len(d))
		}
	})
}

// TestFedAuthGoMSSQLDB logs in with go-mssqldb's own security-token connector and its own
// TLS: the configured token logs in, another is refused with error 18456.
func TestFedAuthGoMSSQLDB(t *testing.T) {
	const token = "eyJ0eXAiOiJKV1QifQ.tdstest-token"
	for _, cfg := range []Config{{FedAuthToken: token}, {FedAuthToken: token, Encryption: EncryptStrict}} {
		srv, err := NewServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		enc := "true"
		if cfg.Encryption == EncryptStrict {
			enc = "strict"
		}
		dsn, err := msdsn.Parse(srv.DSN("encrypt="+enc, "certificate="+srv.CAFile(), "connection+timeout=30"))
		if err != nil {
			t.Fatal(err)
		}
		dsn.User, dsn.Password = "", "" // the token is the only credential
		for _, tc := range []struct {
			token string
			ok    bool
		}{{token, true}, {token + "x", false}} {
			t.Run(enc+"/ok="+map[bool]string{true: "yes", false: "no"}[tc.ok], func(t *testing.T) {
				c, err := mssql.NewSecurityTokenConnector(dsn, func(context.Context) (string, error) { return tc.token, nil })
				if err != nil {
					t.Fatal(err)
				}
				db := sql.OpenDB(c)
				defer db.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var n int
				err = db.QueryRowContext(ctx, "SELECT 1").Scan(&n)
				if tc.ok {
					if err != nil || n != 1 {
						t.Fatalf("SELECT 1 = %d, %v", n, err)
					}
					return
				}
				var merr mssql.Error
				if !errors.As(err, &merr) || merr.Number != 18456 || !strings.Contains(merr.Message, tokenPrincipal) {
					t.Fatalf("err = %v, want login error 18456 for %s", err, tokenPrincipal)
				}
			})
		}
	}
}
