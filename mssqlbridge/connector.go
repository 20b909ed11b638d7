package mssqlbridge

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/prelogin"
)

// DriverName is the name this package registers with database/sql:
// sql.Open(mssqlbridge.DriverName, dsn) takes the same DSNs as sql.Open("sqlserver", dsn).
const DriverName = "tdsbridge"

const encryptionStrict = msdsn.EncryptionStrict

// startSystemRootsEarly makes NewConnector start loading the system roots in the background.
// Only the first-connection measurement (firstconn_test.go) turns it off, to measure the
// on-demand path: the first handshake then loads the pool itself.
var startSystemRootsEarly = true

// settings is what a connector's connections share. Immutable after newSettings.
type settings struct {
	encryption msdsn.Encryption // what the user asked for (the driver's own is disabled)
	tlsBase    *tls.Config      // DSN-derived or the caller's; never modified; nil when disabled
	hostInCert bool             // tlsBase.ServerName was fixed by the DSN or the caller
	file       *filePoolLoad    // the DSN's certificate file, loading in the background; or nil
	serverCert *filePoolLoad    // the DSN's serverCertificate file, loading likewise; or nil
	system     bool             // connections verify against the system roots
	dialer     mssql.Dialer     // the caller's dialer, or nil
	host       string           // the DSN's host, for HostName
	keepAlive  time.Duration
	multiIP    bool // MultiSubnetFailover: dial every address of a name at once
	// lookup resolves host names; nil means net.DefaultResolver.LookupIPAddr. Tests set it
	// (before the first dial) to give a name several loopback addresses.
	lookup func(ctx context.Context, host string) ([]net.IPAddr, error)
	// authenticator is the DSN's authenticator parameter: when it names a provider of
	// RegisterChannelBindingProvider, dials hold the channel-binding slot (channelbinding.go).
	authenticator string
	// The connect bounds, as go-mssqldb applies them (see connecttrace.go): dialTimeout is
	// the dial timeout (0: none), connTimeout the connection timeout (0: none). port is the
	// DSN's port (0: default or instance).
	dialTimeout, connTimeout time.Duration
	port                     uint64
	logger                   *slog.Logger // see WithLogger; nil logs nothing
}

// NewConnector returns a go-mssqldb connector for dsn, which may take any form go-mssqldb
// accepts (sqlserver:// URL, ADO "server=...;", ODBC "odbc:server=...;"), whose connections
// use the bridge's TLS instead of go-mssqldb's own. Use it with sql.OpenDB; it is the drop-in
// replacement for mssql.NewConnector.
//
// Every DSN parameter keeps its go-mssqldb meaning; encrypt=disable|false|true|strict,
// TrustServerCertificate, hostNameInCertificate, certificate, serverCertificate, tlsmin, packet
// size, dial timeout and connection timeout are honoured by the bridged connection (see the
// package documentation for the differences); the combinations go-mssqldb refuses
// (certificate with serverCertificate, serverCertificate with hostNameInCertificate) are
// refused here with its words. One parameter is this package's own: rsakeyexchange=true is
// WithRSAKeyExchange (go-mssqldb ignores it; a value that is not a boolean is an error). The certificate files are not read here but in a background
// goroutine, and, if connections will verify the server's certificate against the system
// roots, so is the system root pool; a connection that needs either waits for it, and a file
// that cannot be loaded fails each such connection with a *CertificateFileError.
//
// The connector's Dialer field is set to the bridge's dialer: do not replace it (use
// WithDialer). Its other fields (SessionInitSQL, ...) may be set as usual.
func NewConnector(dsn string, opts ...Option) (*mssql.Connector, error) {
	cfg, files, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return newConnector(cfg, files, opts)
}

// NewConnectorConfig is NewConnector for a parsed (or hand-built) msdsn.Config, the
// counterpart of mssql.NewConnectorConfig. cfg.TLSConfig carries the TLS settings (msdsn.Parse
// has already read any certificate file) and is used as go-mssqldb uses it: a ServerName set
// in it is the name the certificate is checked against, except the one msdsn.Parse puts there
// by default (cfg.Host, without hostNameInCertificate), which follows the host dialed, as
// go-mssqldb's does on a routing redirect; an empty ServerName means the host dialed.
// Protocols may be empty (it means TCP). cfg is not modified.
func NewConnectorConfig(cfg msdsn.Config, opts ...Option) (*mssql.Connector, error) {
	return newConnector(cfg, dsnFiles{}, opts)
}

func newConnector(cfg msdsn.Config, files dsnFiles, opts []Option) (*mssql.Connector, error) {
	s, err := newSettings(cfg, files, collectOptions(opts))
	if err != nil {
		return nil, err
	}
	c := mssql.NewConnectorConfig(driverConfig(cfg))
	c.Dialer = &dialer{s: s}
	return c, nil
}

// driverConfig returns the driver's copy of cfg: plaintext towards the conn (encryption
// disabled, no TLS config), TCP, and the SPN go-mssqldb would derive.
func driverConfig(cfg msdsn.Config) msdsn.Config {
	drv := cfg
	drv.Encryption = msdsn.EncryptionDisabled
	drv.TLSConfig = nil
	if drv.ServerSPN == "" {
		// go-mssqldb derives the SPN after dialing, except through a HostDialer.
		drv.ServerSPN = defaultSPN(cfg)
	}
	if len(drv.Protocols) == 0 {
		drv.Protocols = []string{"tcp"}
	} else {
		drv.Protocols = append([]string(nil), drv.Protocols...)
	}
	return drv
}

// newSettings builds what the connector's connections share. With WithTLSConfig, the DSN's
// certificate files are not read at all: the caller's config replaces every TLS setting the
// DSN makes.
func newSettings(cfg msdsn.Config, files dsnFiles, o options) (*settings, error) {
	switch cfg.Encryption {
	case msdsn.EncryptionOff, msdsn.EncryptionRequired, msdsn.EncryptionDisabled, msdsn.EncryptionStrict:
	default:
		return nil, fmt.Errorf("mssqlbridge: unknown encryption setting %d", cfg.Encryption)
	}
	for _, p := range cfg.Protocols {
		if p != "tcp" && p != "admin" {
			// Any other protocol would bypass the bridge's dialer, and with it encryption.
			return nil, fmt.Errorf("mssqlbridge: protocol %q is not supported (only tcp)", p)
		}
	}
	s := &settings{
		encryption: cfg.Encryption,
		dialer:     o.dialer,
		host:       cfg.Host,
		keepAlive:  cfg.KeepAlive,
		multiIP:    cfg.MultiSubnetFailover,

		authenticator: cfg.Parameters["authenticator"],

		dialTimeout: dialTimeout(cfg),
		connTimeout: cfg.ConnTimeout,
		port:        cfg.Port,
		logger:      o.logger,
	}
	rsaKex, err := rsaKeyExchangeWanted(cfg, o)
	if err != nil {
		return nil, err
	}
	if cfg.Encryption == msdsn.EncryptionDisabled {
		return s, nil // no TLS: load nothing
	}
	switch {
	case o.tlsConfig != nil:
		s.tlsBase = o.tlsConfig.Clone()
		s.hostInCert = s.tlsBase.ServerName != ""
	case cfg.TLSConfig != nil:
		s.tlsBase = cfg.TLSConfig.Clone()
		name := s.tlsBase.ServerName
		s.hostInCert = cfg.HostInCertificateProvided || (name != "" && name != cfg.Host)
	default:
		s.tlsBase = &tls.Config{}
	}
	if cfg.Encryption == msdsn.EncryptionStrict {
		s.tlsBase.NextProtos = []string{"tds/8.0"}
	}
	if rsaKex {
		s.tlsBase.CipherSuites = withRSAKeyExchange(s.tlsBase.CipherSuites)
	}
	if o.tlsConfig == nil {
		if files.certificate != "" {
			s.file = newFilePoolLoad(files.certificate)
			s.file.start()
		}
		if files.serverCertificate != "" {
			s.serverCert = newFilePoolLoad(files.serverCertificate)
			s.serverCert.start()
		}
	}
	verifies := !s.tlsBase.InsecureSkipVerify && s.tlsBase.RootCAs == nil && s.serverCert == nil
	s.system = verifies && (s.file == nil || s.hostInCertHasColon())
	if s.system && startSystemRootsEarly {
		systemRoots.start()
	}
	return s, nil
}

// dialTimeout is the dial timeout go-mssqldb puts in the dial's context for cfg: DialTimeout,
// 15 s per protocol when zero, none when negative.
func dialTimeout(cfg msdsn.Config) time.Duration {
	switch {
	case cfg.DialTimeout < 0:
		return 0
	case cfg.DialTimeout == 0:
		return time.Duration(15*len(driverConfig(cfg).Protocols)) * time.Second
	}
	return cfg.DialTimeout
}

// hostInCertHasColon reports whether the server name contains ':' (an IPv6 address, or a
// hostNameInCertificate with a colon), for which msdsn checks a certificate file's chain
// against the system roots (see verifyCommonName).
func (s *settings) hostInCertHasColon() bool {
	return strings.Contains(s.tlsBase.ServerName, ":")
}

// sendValue is the ENCRYPTION value sent to the server: what go-mssqldb itself sends for the
// user's setting. An encrypt setting it does not know is an error, never a guess.
func (s *settings) sendValue() (prelogin.Encryption, error) {
	switch s.encryption {
	case msdsn.EncryptionDisabled:
		return prelogin.EncryptNotSup, nil
	case msdsn.EncryptionOff:
		return prelogin.EncryptOff, nil
	case msdsn.EncryptionRequired:
		return prelogin.EncryptOn, nil
	case msdsn.EncryptionStrict:
		return prelogin.EncryptStrict, nil
	default:
		return 0, fmt.Errorf("mssqlbridge: unknown encrypt setting %d", s.encryption)
	}
}

// defaultSPN is the Kerberos service principal name go-mssqldb derives when the DSN gives
// none: MSSQLSvc/host:port (or host:instance), with the machine's name for a loopback
// address.
func defaultSPN(cfg msdsn.Config) string {
	host := cfg.Host
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	port := cfg.Instance
	if port == "" {
		p := cfg.Port
		if p == 0 {
			p = 1433
		}
		port = strconv.FormatUint(p, 10)
	}
	return "MSSQLSvc/" + host + ":" + port
}
