package mssqlbridge

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// certificateKey is the DSN parameter naming a CA certificate file (.pem or .der). msdsn.Parse
// reads that file itself, on the caller's goroutine; parseDSN takes the parameter out first so
// that the connector's background loader reads it instead (see certpool.go).
const certificateKey = msdsn.Certificate

// parseDSN parses dsn in any of go-mssqldb's three forms (URL "sqlserver://...", ADO
// "server=...;...", ODBC "odbc:server=...;...") with msdsn.Parse, after removing the
// certificate parameter, whose value it returns as certFile ("" when absent). Every other
// parameter, including every validation msdsn applies, is msdsn's own. A DSN whose
// certificate parameter cannot be located unambiguously (a malformed DSN, or a URL that repeats
// the key) is handed to msdsn.Parse unchanged, which then reports the error itself.
func parseDSN(dsn string) (cfg msdsn.Config, certFile string, err error) {
	stripped, certFile := cutCertificate(dsn)
	cfg, err = msdsn.Parse(stripped)
	if err != nil {
		return cfg, "", fmt.Errorf("mssqlbridge: parse DSN: %w", err)
	}
	if certFile != "" {
		// Keep Parameters as msdsn would have it, for code that inspects it.
		cfg.Parameters[certificateKey] = certFile
	}
	return cfg, certFile, nil
}

// cutCertificate returns dsn without its certificate parameter, and that parameter's value.
// When the parameter is absent or cannot be located unambiguously it returns dsn unchanged
// and "".
func cutCertificate(dsn string) (string, string) {
	switch {
	case strings.HasPrefix(dsn, "sqlserver://"):
		return cutCertificateURL(dsn)
	case strings.HasPrefix(dsn, "odbc:"):
		rest, file := cutCertificateODBC(dsn[len("odbc:"):])
		return "odbc:" + rest, file
	default:
		return cutCertificateADO(dsn)
	}
}

// cutCertificateURL handles the URL form: msdsn lower-cases query keys and rejects repeated
// keys, so exactly one key equal (ignoring case) to "certificate" with one value is removed.
func cutCertificateURL(dsn string) (string, string) {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn, ""
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return dsn, ""
	}
	var key string
	for k, v := range q {
		if strings.EqualFold(k, certificateKey) {
			if key != "" || len(v) != 1 {
				return dsn, "" // repeated: msdsn reports it
			}
			key = k
		}
	}
	if key == "" {
		return dsn, ""
	}
	file := q.Get(key)
	q.Del(key)
	u.RawQuery = q.Encode()
	return u.String(), file
}

// cutCertificateADO handles the ADO form with msdsn's rules: parts separated by ';' outside
// double quotes, "name=value", the name trimmed and lower-cased, the value trimmed and, when
// wholly double-quoted, unquoted with "" standing for ". A later part overrides an earlier one.
func cutCertificateADO(dsn string) (string, string) {
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
		if strings.ToLower(strings.TrimSpace(name)) != certificateKey {
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

// cutCertificateODBC handles the ODBC form (without its "odbc:" prefix) with msdsn's rules:
// keys end at '=', are lower-cased and right-trimmed; values are bare (to the next ';',
// right-trimmed) or braced ("}}" stands for '}'). It removes every pair whose key is
// "certificate" (a later pair overrides an earlier one) and returns the last value. A syntax
// error leaves the string unchanged for msdsn to report.
func cutCertificateODBC(s string) (string, string) {
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
		if strings.ToLower(strings.TrimRightFunc(key.String(), unicode.IsSpace)) == certificateKey {
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
