package main

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// withParams returns dsn with the given connection parameters set, replacing any the DSN
// already has under any letter case. URL DSNs (sqlserver://...) get them in the query; other
// (ADO-style "key=value;...") DSNs get "; key=value" appended, which go-mssqldb lets override
// earlier keys. Keys are go-mssqldb's lower-case names, such as "encrypt" and "packet size".
func withParams(dsn string, params map[string]string) (string, error) {
	if !strings.HasPrefix(strings.ToLower(dsn), "sqlserver://") {
		if strings.HasPrefix(strings.ToLower(dsn), "odbc:") {
			return "", fmt.Errorf("bench: ODBC-style DSNs are not supported here; use a sqlserver:// URL or key=value;... form")
		}
		var b strings.Builder
		b.WriteString(strings.TrimRight(dsn, "; "))
		for _, k := range slices.Sorted(maps.Keys(params)) {
			fmt.Fprintf(&b, ";%s=%s", k, params[k])
		}
		return b.String(), nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("bench: parse DSN: %w", err)
	}
	q := u.Query()
	for k := range q {
		if _, ok := params[strings.ToLower(k)]; ok {
			q.Del(k)
		}
	}
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// redactDSN returns the host (and instance) part of dsn only, for reports: never the password.
func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && strings.EqualFold(u.Scheme, "sqlserver") {
		return u.Host + u.Path
	}
	for _, part := range strings.Split(dsn, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "server", "data source", "address", "addr", "network address":
			return strings.TrimSpace(v)
		}
	}
	return "(server from DSN)"
}
