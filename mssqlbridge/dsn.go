package mssqlbridge

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

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

// serverCertificateADO is the ADO spelling msdsn also accepts for serverCertificate.
const serverCertificateADO = "server certificate"

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
// "server=...;...", ODBC "odbc:server=...;...") with msdsn.Parse, after removing the
// certificate and serverCertificate parameters, whose values it returns in files. Every other
// parameter, including every validation msdsn applies, is msdsn's own; the two that concern
// the removed parameters (certificate with serverCertificate, serverCertificate with
// hostNameInCertificate) are applied here with msdsn's words. A DSN whose parameters cannot
// be located unambiguously (a malformed DSN, or a URL that repeats a key) is handed to
// msdsn.Parse unchanged, which then reports the error itself.
func parseDSN(dsn string) (cfg msdsn.Config, files dsnFiles, err error) {
	stripped, certFile := cutParam(dsn, certificateKey)
	stripped, serverFile := cutParam(stripped, serverCertificateKey, serverCertificateADO)
	cfg, err = msdsn.Parse(stripped)
	if err != nil {
		return cfg, dsnFiles{}, fmt.Errorf("mssqlbridge: parse DSN: %w", err)
	}
	if serverFile != "" {
		switch {
		case certFile != "":
			return cfg, dsnFiles{}, fmt.Errorf("mssqlbridge: parse DSN: %w", errCertificateAndServerCertificate)
		case cfg.Parameters[msdsn.HostNameInCertificate] != "":
			return cfg, dsnFiles{}, fmt.Errorf("mssqlbridge: parse DSN: %w", errServerCertificateAndHostName)
		}
	}
	// Keep Parameters as msdsn would have it, for code that inspects it.
	if certFile != "" {
		cfg.Parameters[certificateKey] = certFile
	}
	if serverFile != "" {
		cfg.Parameters[serverCertificateKey] = serverFile
	}
	return cfg, dsnFiles{certificate: certFile, serverCertificate: serverFile}, nil
}

// cutParam returns dsn without its parameter key (lower case; in the ADO form also any of
// adoNames, msdsn's synonyms), and that parameter's value. When the parameter is absent or
// cannot be located unambiguously it returns dsn unchanged and "".
func cutParam(dsn, key string, adoNames ...string) (string, string) {
	switch {
	case strings.HasPrefix(dsn, "sqlserver://"):
		return cutParamURL(dsn, key)
	case strings.HasPrefix(dsn, "odbc:"):
		rest, value := cutParamODBC(dsn[len("odbc:"):], key)
		return "odbc:" + rest, value
	default:
		return cutParamADO(dsn, append([]string{key}, adoNames...))
	}
}

// cutParamURL handles the URL form: msdsn lower-cases query keys and rejects repeated keys,
// so exactly one key equal (ignoring case) to key with one value is removed.
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

// cutParamADO handles the ADO form with msdsn's rules: parts separated by ';' outside double
// quotes, "name=value", the name trimmed and lower-cased, the value trimmed and, when wholly
// double-quoted, unquoted with "" standing for ". It removes every part whose name is one of
// names (synonyms of one key); a later part overrides an earlier one.
func cutParamADO(dsn string, names []string) (string, string) {
	var (
		parts   []string
		start   int
		inQuote bool
	)
	for i := 0; i < len(dsn); i++ {
		switch dsn[i] {
		case '"':
			if inQuote && i+1 < len(dsn) && dsn[i+1] == '"' {
				i++
				continue
			}
			inQuote = !inQuote
		case ';':
			if !inQuote {
				parts = append(parts, dsn[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, dsn[start:])

	var (
		kept  = parts[:0:0]
		file  string
		found bool
	)
	for _, part := range parts {
		name, value, _ := strings.Cut(part, "=")
		if !slices.Contains(names, strings.ToLower(strings.TrimSpace(name))) {
			kept = append(kept, part)
			continue
		}
		value = strings.TrimSpace(value)
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = strings.ReplaceAll(value[1:len(value)-1], `""`, `"`)
		}
		file, found = value, true
	}
	if !found {
		return dsn, ""
	}
	return strings.Join(kept, ";"), file
}

// cutParamODBC handles the ODBC form (without its "odbc:" prefix) with msdsn's rules: keys
// end at '=', are lower-cased and right-trimmed; values are bare (to the next ';',
// right-trimmed) or braced ("}}" stands for '}'). It removes every pair whose key is key (a
// later pair overrides an earlier one) and returns the last value. A syntax error leaves the
// string unchanged for msdsn to report.
func cutParamODBC(s, want string) (string, string) {
	const (
		beforeKey = iota
		inKey
		beginValue
		bareValue
		bracedValue
		bracedClose
		endValue
	)
	type span struct{ start, end int } // [start, end) of a pair, end past its ';' if any
	var (
		state      = beforeKey
		pairStart  int
		key, value strings.Builder
		spans      []span
		file       string
		found      bool
	)
	finish := func(end int, v string) {
		if strings.ToLower(strings.TrimRightFunc(key.String(), unicode.IsSpace)) == want {
			spans = append(spans, span{pairStart, end})
			file, found = v, true
		}
		key.Reset()
		value.Reset()
	}
	for i, c := range s {
		next := i + len(string(c))
		switch state {
		case beforeKey:
			if c == '=' {
				return s, ""
			}
			if !unicode.IsSpace(c) && c != ';' {
				state, pairStart = inKey, i
				key.WriteRune(c)
			}
		case inKey:
			switch c {
			case '=':
				state = beginValue
			case ';':
				finish(next, "")
				state = beforeKey
			default:
				key.WriteRune(c)
			}
		case beginValue:
			switch {
			case c == '{':
				state = bracedValue
			case c == ';':
				finish(next, "")
				state = beforeKey
			case unicode.IsSpace(c):
			default:
				state = bareValue
				value.WriteRune(c)
			}
		case bareValue:
			if c == ';' {
				finish(next, strings.TrimRightFunc(value.String(), unicode.IsSpace))
				state = beforeKey
			} else {
				value.WriteRune(c)
			}
		case bracedValue:
			if c == '}' {
				state = bracedClose
			} else {
				value.WriteRune(c)
			}
		case bracedClose:
			if c == '}' {
				value.WriteRune(c)
				state = bracedValue
				continue
			}
			v := value.String()
			switch {
			case c == ';':
				finish(next, v)
				state = beforeKey
			case unicode.IsSpace(c):
				state = endValue
				pendingValue := v
				value.Reset()
				value.WriteString(pendingValue)
			default:
				return s, ""
			}
		case endValue:
			switch {
			case c == ';':
				finish(next, value.String())
				state = beforeKey
			case unicode.IsSpace(c):
			default:
				return s, ""
			}
		}
	}
	switch state {
	case inKey, beginValue:
		finish(len(s), "")
	case bareValue:
		finish(len(s), strings.TrimRightFunc(value.String(), unicode.IsSpace))
	case bracedValue:
		return s, ""
	case bracedClose, endValue:
		finish(len(s), value.String())
	}
	if !found {
		return s, ""
	}
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		b.WriteString(s[prev:sp.start])
		prev = sp.end
	}
	b.WriteString(s[prev:])
	return b.String(), file
}
