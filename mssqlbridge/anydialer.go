package mssqlbridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// Dialer puts the bridged transport under a go-mssqldb connector built by other means than
// NewConnector: mssql.NewSecurityTokenConnector, mssql.NewActiveDirectoryTokenConnector,
// azuread.NewConnector, or a connector whose DSN selects Kerberos or NTLM. It is a
// go-mssqldb HostDialer: set it as the connector's Dialer.
//
// The Dialer carries the user's encryption and TLS settings; the connector must be built
// with the driver's own encryption off (encrypt=disable), so that the driver talks plaintext
// TDS to the Dialer's conns, which encrypt as the Dialer's settings say:
//
//	d, err := mssqlbridge.NewDialer(dsn)                                 // the real settings
//	c, err := mssql.NewSecurityTokenConnector(d.DriverConfig(), tokens) // encryption off
//	c.Dialer = d
//
// For a connector built from a DSN string (azuread.NewConnector), pass DriverDSN(dsn).
//
// A connector whose own encryption was left on is refused on its first connection, before
// any byte reaches the server, with an error wrapping ErrDriverEncryption: the driver would
// otherwise run its TLS inside the Dialer's (encrypt=true: TLS in TLS, which no server
// accepts) or ask the server for a mode the user did not choose. Nothing is silently
// downgraded.
//
// A Dialer is immutable and safe for concurrent use; one Dialer may serve several
// connectors with the same settings.
type Dialer struct {
	d   dialer
	drv msdsn.Config // the driver's config: encryption disabled
}

// NewDialer returns a Dialer for dsn, in any form NewConnector takes; every TLS and
// encryption parameter keeps its meaning there (encrypt, TrustServerCertificate,
// hostNameInCertificate, certificate, serverCertificate, tlsmin). The certificate files are
// loaded in the background, as NewConnector does.
func NewDialer(dsn string, opts ...Option) (*Dialer, error) {
	cfg, files, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return newDialer(cfg, files, opts)
}

// NewDialerConfig is NewDialer for a parsed (or hand-built) msdsn.Config, with
// NewConnectorConfig's rules for cfg.TLSConfig. cfg is not modified.
func NewDialerConfig(cfg msdsn.Config, opts ...Option) (*Dialer, error) {
	return newDialer(cfg, dsnFiles{}, opts)
}

func newDialer(cfg msdsn.Config, files dsnFiles, opts []Option) (*Dialer, error) {
	s, err := newSettings(cfg, files, collectOptions(opts))
	if err != nil {
		return nil, err
	}
	return &Dialer{d: dialer{s: s}, drv: driverConfig(cfg)}, nil
}

// DriverConfig returns the config to build the connector from: a copy of the config the
// Dialer was made from with the driver's own encryption disabled and no TLS config, TCP as
// the protocol, and the Kerberos SPN go-mssqldb would derive when none was given. Every other
// field (user, database, packet size, timeouts, ...) is unchanged.
func (d *Dialer) DriverConfig() msdsn.Config {
	cfg := d.drv
	cfg.Protocols = append([]string(nil), d.drv.Protocols...)
	return cfg
}

// HostName returns the host of the DSN the Dialer was made from. go-mssqldb passes the host
// it dials to DialContext (after a routing redirect, the routed host), and that host is the
// one the certificate is checked against.
func (d *Dialer) HostName() string { return d.d.HostName() }

// DialContext dials addr ("host:port", the host unresolved) and returns the bridged conn,
// which negotiates the Dialer's encryption on the driver's PRELOGIN (in strict mode it runs
// the TLS handshake here, bounded by ctx). Other networks than TCP (SQL Server Browser's UDP)
// are dialed as is.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.d.DialContext(ctx, network, addr)
}

// DriverDSN returns dsn (any of go-mssqldb's three forms) with encrypt=disable in place of
// its encrypt parameter (in the ADO and ODBC forms, appended: there a later key overrides an
// earlier one), for building a connector from a DSN string whose Dialer will be a
// Dialer made from dsn itself:
//
//	d, err := mssqlbridge.NewDialer(dsn)
//	drv, err := mssqlbridge.DriverDSN(dsn)
//	c, err := azuread.NewConnector(drv)
//	c.Dialer = d
//
// Every other parameter is kept. It fails when dsn does not parse, or when the result would
// not disable the driver's encryption (for example a URL repeating the encrypt key).
func DriverDSN(dsn string) (string, error) {
	const key, value = "encrypt", "disable"
	if _, _, err := parseDSN(dsn); err != nil {
		return "", fmt.Errorf("mssqlbridge: DriverDSN: %w", err)
	}
	var out string
	if strings.HasPrefix(dsn, "sqlserver://") {
		stripped, _ := cutParamURL(dsn, key)
		u, err := url.Parse(stripped)
		if err != nil {
			return "", errors.New("mssqlbridge: DriverDSN: invalid URL DSN")
		}
		q := u.Query()
		q.Set(key, value)
		u.RawQuery = q.Encode()
		out = u.String()
	} else { // ADO and ODBC: a later key overrides an earlier one
		out = strings.TrimRight(dsn, "; \t") + ";" + key + "=" + value
	}
	cfg, _, err := parseDSN(out)
	if err != nil {
		return "", fmt.Errorf("mssqlbridge: DriverDSN: %w", err)
	}
	if cfg.Encryption != msdsn.EncryptionDisabled {
		return "", errors.New("mssqlbridge: DriverDSN: could not set encrypt=disable in the DSN")
	}
	return out, nil
}
