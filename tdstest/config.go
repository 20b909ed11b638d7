package tdstest

import (
	"crypto/tls"
	"fmt"
	"net"
	"slices"
)

// Defaults of Config.
const (
	DefaultUser     = "sa"
	DefaultPassword = "tdstest-Passw0rd"
)

// maxRecordSize is the largest TLS record plaintext (RFC 8446 5.1, RFC 5246 6.2.1).
const maxRecordSize = 16384

// Config configures a Server. The zero value is a server that requires encryption (setting ON),
// presents a self-signed ECDSA certificate and accepts the user "sa" with password
// "tdstest-Passw0rd".
type Config struct {
	// Encryption is the server's encryption setting; the zero value is EncryptOn.
	Encryption Encryption
	// User and Password are the only credentials accepted; empty means DefaultUser and
	// DefaultPassword. The user name is compared case-insensitively, the password exactly.
	User, Password string
	// FedAuthToken, when not empty, makes the server accept federated authentication with a
	// security token (MS-TDS 2.2.6.4 FEDAUTH, library 0x01) equal to it: a LOGIN7 whose
	// FeatureExt carries FEDAUTH with this token logs in (the response acknowledges the
	// feature in FEATUREEXTACK); any other token is refused with error 18456, "Login failed
	// for user '<token-identified principal>'". The PRELOGIN reply then answers a client's
	// FEDAUTHREQUIRED with 1. User and password logins are still accepted.
	FedAuthToken string
	// RouteTo, when not empty ("host:port"), routes every successful login to that server:
	// the login response carries ENVCHANGE type 20 (routing, MS-TDS 2.2.7.9) after LOGINACK,
	// as Azure SQL's redirect policy and read-only routing do, and the server then closes the
	// connection. The client is expected to log in again at host:port (go-mssqldb does, and
	// checks the certificate against host unless hostNameInCertificate is set).
	RouteTo string
	// Cert selects the server certificate (made at Start): CertECDSA (default), CertRSA2048,
	// CertLargeChain (a chain of more than 4096 bytes), or one that a client fails to verify
	// even when it trusts CAFile: CertWrongName, CertUnknownCA, CertExpired, CertNotYetValid,
	// CertNegativeSerial.
	Cert CertKind
	// MinTLSVersion and MaxTLSVersion bound the TLS versions the server accepts
	// (tls.VersionTLS10 ... tls.VersionTLS13), as the server's tls.Config MinVersion and
	// MaxVersion. 0 means the defaults: at least TLS 1.2; at most TLS 1.2 inside PRELOGIN (as
	// SQL Server) and TLS 1.3 in strict mode. Both set to tls.VersionTLS10 make a server that,
	// like an unpatched older SQL Server, speaks only TLS 1.0: a Go client with its default
	// minimum (TLS 1.2) fails, one with tlsmin=1.0 connects.
	MinTLSVersion, MaxTLSVersion uint16
	// CipherSuites, when not nil, is the server's list of TLS 1.0-1.2 cipher suites, used as
	// given (tls.Config.CipherSuites; TLS 1.3 suites are not configurable). For example
	// []uint16{tls.TLS_RSA_WITH_AES_128_GCM_SHA256} with Cert CertRSA2048 makes a server that
	// speaks only RSA key exchange, as older SQL Server versions on older Windows do: a Go
	// client, which leaves RSA key exchange out by default, fails with a handshake_failure
	// alert. Every ID must be a suite crypto/tls implements. nil means Go's defaults.
	CipherSuites []uint16
	// RecordSize, when positive, makes the server write TLS records of exactly RecordSize bytes
	// of plaintext, regardless of TDS packet boundaries; the last record of each message carries
	// the remainder. 0 means one record per TDS packet, like SQL Server. At most 16384.
	RecordSize int
	// Addr is the address to listen on, "host:port" with a loopback IP host; empty means
	// "127.0.0.1:0" (a free port). The server never listens beyond loopback.
	Addr string
	// Faults injects faults; the zero value injects none.
	Faults Faults
	// Logf receives the server's log: one line per connection event and every error. nil
	// discards it. It may be called from several goroutines at once, and never after Close
	// has returned.
	Logf func(format string, args ...any)
}

func (c *Config) user() string {
	if c.User == "" {
		return DefaultUser
	}
	return c.User
}

func (c *Config) password() string {
	if c.Password == "" {
		return DefaultPassword
	}
	return c.Password
}

// validate checks the fields that can be wrong.
func (c *Config) validate() error {
	if int(c.Encryption) >= len(encryptionNames) {
		return fmt.Errorf("tdstest: Config.Encryption: unknown %v", c.Encryption)
	}
	if c.RecordSize < 0 || c.RecordSize > maxRecordSize {
		return fmt.Errorf("tdstest: Config.RecordSize %d: want 0..%d", c.RecordSize, maxRecordSize)
	}
	if c.Addr != "" {
		host, _, err := net.SplitHostPort(c.Addr)
		if err != nil {
			return fmt.Errorf("tdstest: Config.Addr %q: %w", c.Addr, err)
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("tdstest: Config.Addr %q: want a loopback IP address", c.Addr)
		}
	}
	if c.RouteTo != "" {
		if _, err := parseRoute(c.RouteTo); err != nil {
			return err
		}
	}
	for _, v := range []uint16{c.MinTLSVersion, c.MaxTLSVersion} {
		if v != 0 && (v < tls.VersionTLS10 || v > tls.VersionTLS13) {
			return fmt.Errorf("tdstest: Config TLS version %#04x: want tls.VersionTLS10..tls.VersionTLS13 or 0", v)
		}
	}
	if c.MinTLSVersion != 0 && c.MaxTLSVersion != 0 && c.MinTLSVersion > c.MaxTLSVersion {
		return fmt.Errorf("tdstest: Config.MinTLSVersion %s is above MaxTLSVersion %s",
			tls.VersionName(c.MinTLSVersion), tls.VersionName(c.MaxTLSVersion))
	}
	for _, id := range c.CipherSuites {
		if !knownCipherSuite(id) {
			return fmt.Errorf("tdstest: Config.CipherSuites: %#04x is not a suite crypto/tls implements", id)
		}
	}
	if c.Cert > CertNegativeSerial {
		return fmt.Errorf("tdstest: Config.Cert: unknown %v", c.Cert)
	}
	return c.Faults.validate()
}

// serverTLS returns the server's base tls.Config for cert: the version bounds and cipher
// suites of c (the bridge caps the version at TLS 1.2 inside PRELOGIN).
func (c *Config) serverTLS(cert tls.Certificate) *tls.Config {
	minVersion := c.MinTLSVersion
	if minVersion == 0 {
		minVersion = tls.VersionTLS12
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   minVersion,
		MaxVersion:   c.MaxTLSVersion,
		CipherSuites: slices.Clone(c.CipherSuites),
	}
}

// knownCipherSuite reports whether crypto/tls implements the suite id.
func knownCipherSuite(id uint16) bool {
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if cs.ID == id {
			return true
		}
	}
	return false
}
