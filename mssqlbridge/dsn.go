package mssqlbridge

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// certificateKey and serverCertificateKey are the DSN parameters naming a certificate file
// (.pem or .der): a CA to verify the server's chain against, or the exact certificate the
// server must present. msdsn.Parse reads those files itself, on the caller's goroutine;
// parseDSN takes the parameters out first so that the connector's background loader reads
// them instead (see certpool.go).
const (
	certificateKey       = msdsn.Certificate
	serverCertificateKey = msdsn.ServerCertificate
)

// The DSN combinations msdsn.Parse refuses, with its own words (go-mssqldb v1.11.2).
var (
	errCertificateAndServerCertificate = errors.New("cannot specify both 'certificate' and 'serverCertificate' parameters")
	errServerCertificateAndHostName    = errors.New("cannot specify both 'serverCertificate' and 'hostnameincertificate' parameters")
)

// dsnFiles are the certificate files a DSN names; "" when absent.
type dsnFiles struct {
	certificate       string // certificate=: CA file, chain verification
	serverCertificate string // serverCertificate=: the server's own certificate, byte comparison
}

// parseDSN parses dsn in any of go-mssqldb's three forms (URL "sqlserver://...", ADO
// "server=...;...", ODBC "odbc:server=...;...") with msdsn.Parse, without letting msdsn read
// the certificate and serverCertificate files, whose names it returns in files. Every
// parameter and every validation is msdsn's own; the two validations that concern the
// certificate parameters (certificate with serverCertificate, serverCertificate with
// hostNameInCertificate) are applied here with msdsn's words. cfg.Parameters is what
// msdsn.Parse of dsn would give.
//
// The URL form gets the parameters taken out of its query (msdsn refuses a repeated key, so
// there is exactly one of each). In the ADO and ODBC forms a later key overrides an earlier
// one, so msdsn parses dsn with ";certificate=;servercertificate=" appended, for the
// configuration, and once per file name with ";encrypt=disable" appended (msdsn reads no file
// then). An ADO DSN that ends inside an unterminated quote, which swallows what is appended,
// is handed to msdsn.Parse unchanged: msdsn then reads the files on the caller's goroutine
// too, and parseDSN returns their names all the same.
func parseDSN(dsn string) (cfg msdsn.Config, files dsnFiles, err error) {
	if strings.HasPrefix(dsn, "sqlserver://") {
		var stripped string
		stripped, files.certificate = cutParamURL(dsn, certificateKey)
		stripped, files.serverCertificate = cutParamURL(stripped, serverCertificateKey)
		cfg, err = msdsn.Parse(stripped)
	} else {
		cfg, files, err = parseDSNAppending(dsn)
	}
	if err != nil {
		return cfg, dsnFiles{}, fmt.Errorf("mssqlbridge: parse DSN: %w", err)
	}
	if files.serverCertificate != "" {
		switch {
		case files.certificate != "":
			return cfg, dsnFiles{}, fmt.Errorf("mssqlbridge: parse DSN: %w", errCertificateAndServerCertificate)
		case cfg.Parameters[msdsn.HostNameInCertificate] != "":
			return cfg, dsnFiles{}, fmt.Errorf("mssqlbridge: parse DSN: %w", errServerCertificateAndHostName)
		}
	}
	// Keep Parameters as msdsn would have it, for code that inspects it.
	if files.certificate != "" {
		cfg.Parameters[certificateKey] = files.certificate
	}
	if files.serverCertificate != "" {
		cfg.Parameters[serverCertificateKey] = files.serverCertificate
	}
	return cfg, files, nil
}

// parseDSNAppending parses an ADO or ODBC DSN as parseDSN describes; the certificate
// parameters are absent from cfg.Parameters.
func parseDSNAppending(dsn string) (msdsn.Config, dsnFiles, error) {
	cfg, took, err := parseAppended(dsn, certificateKey+"=", serverCertificateKey+"=")
	if err != nil || !took {
		cfg, err = msdsn.Parse(dsn)
		return cfg, dsnFiles{certificate: cfg.Parameters[certificateKey], serverCertificate: cfg.Parameters[serverCertificateKey]}, err
	}
	// Each name with encryption off (msdsn reads no file then) and the parameters msdsn refuses
	// beside it blanked (msdsn checks the combinations even then; parseDSN does instead).
	off := msdsn.Encrypt + "=disable"
	certNames, _, err := parseAppended(dsn, off, serverCertificateKey+"=")
	if err != nil {
		return cfg, dsnFiles{}, err
	}
	serverNames, _, err := parseAppended(dsn, off, certificateKey+"=", msdsn.HostNameInCertificate+"=")
	if err != nil {
		return cfg, dsnFiles{}, err
	}
	delete(cfg.Parameters, certificateKey)
	delete(cfg.Parameters, serverCertificateKey)
	return cfg, dsnFiles{certificate: certNames.Parameters[certificateKey], serverCertificate: serverNames.Parameters[serverCertificateKey]}, nil
}

// appendedProbe is a parameter parseAppended appends last, and msdsn keeps in Parameters like
// any other key: present after parsing only if the appended parameters were parsed as such.
const appendedProbe = "mssqlbridge-appended=1"

// parseAppended parses an ADO or ODBC dsn with params ("key=value") appended, each overriding
// an earlier occurrence of its key. took is false when dsn ends inside an unterminated quoted
// value, which swallows what follows.
func parseAppended(dsn string, params ...string) (cfg msdsn.Config, took bool, err error) {
	for _, p := range append(params, appendedProbe) {
		dsn += ";" + p
	}
	cfg, err = msdsn.Parse(dsn)
	if err != nil {
		return cfg, false, err
	}
	key, value, _ := strings.Cut(appendedProbe, "=")
	took = cfg.Parameters[key] == value
	delete(cfg.Parameters, key)
	return cfg, took, nil
}

// cutParamURL returns a URL DSN without its query parameter key (compared ignoring case, as
// msdsn lower-cases query keys), and that parameter's value. When the parameter is absent, or
// repeated (msdsn refuses that), or the URL does not parse, it returns dsn unchanged and "".
func cutParamURL(dsn, key string) (string, string) {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn, ""
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return dsn, ""
	}
	var found string
	for k, v := range q {
		if strings.EqualFold(k, key) {
			if found != "" || len(v) != 1 {
				return dsn, "" // repeated: msdsn reports it
			}
			found = k
		}
	}
	if found == "" {
		return dsn, ""
	}
	value := q.Get(found)
	q.Del(found)
	u.RawQuery = q.Encode()
	return u.String(), value
}
