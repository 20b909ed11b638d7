package mssqlbridge

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strconv"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// rsaKeyExchangeParam is the DSN parameter that turns WithRSAKeyExchange on
// (rsakeyexchange=true). msdsn keeps parameters it does not know in Config.Parameters, and
// go-mssqldb ignores them; keys are compared ignoring case.
const rsaKeyExchangeParam = "rsakeyexchange"

// rsaKeyExchangeSuites are the RSA key exchange suites that Go leaves out of its default list
// since Go 1.22 and that GODEBUG tlsrsakex=1 would restore process-wide. The others with RSA
// key exchange (3DES, RC4, CBC-SHA256) stay out: Go leaves them out for other reasons too.
var rsaKeyExchangeSuites = []uint16{
	tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	tls.TLS_RSA_WITH_AES_256_CBC_SHA,
}

// WithRSAKeyExchange lets connections use the TLS cipher suites with RSA key exchange
// (TLS_RSA_WITH_AES_128_GCM_SHA256, TLS_RSA_WITH_AES_256_GCM_SHA384,
// TLS_RSA_WITH_AES_128_CBC_SHA, TLS_RSA_WITH_AES_256_CBC_SHA), which Go leaves out by
// default: older SQL Server versions, and servers on older Windows, speak no other. Off by
// default; the DSN parameter rsakeyexchange=true does the same.
//
// It affects only this connector's connections: their tls.Config lists Go's default secure
// suites (the TLS 1.0-1.2 suites of tls.CipherSuites) plus these, instead of the process-wide
// GODEBUG tlsrsakex=1. With WithTLSConfig, a config whose CipherSuites is not nil keeps its
// list, with these added. crypto/tls still prefers ECDHE suites, so a server that offers one
// still gets it; TLS 1.3 (strict mode) is not affected.
//
// The cost in security: RSA key exchange has no forward secrecy (whoever obtains the server's
// private key later, even years later, can decrypt every recorded session that used it), and
// it is exposed to padding-oracle attacks against servers that implement it badly (Bleichenbacher,
// ROBOT). Prefer enabling ECDHE suites on the server; use this only for servers that cannot.
func WithRSAKeyExchange() Option {
	return func(o *options) { o.rsaKeyExchange = true }
}

// rsaKeyExchangeParamValue reports whether params (a DSN's parameters) turn RSA key exchange
// on, and fails for a value that is not a boolean.
func rsaKeyExchangeParamValue(params map[string]string) (bool, error) {
	v, ok := params[rsaKeyExchangeParam]
	if !ok {
		return false, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("mssqlbridge: DSN parameter %s=%q: want true or false", rsaKeyExchangeParam, v)
	}
	return on, nil
}

// withRSAKeyExchange returns suites (a tls.Config's CipherSuites) with the RSA key exchange
// suites added; nil stands for Go's default secure TLS 1.0-1.2 suites. crypto/tls ignores the
// order of the list (it orders suites itself).
func withRSAKeyExchange(suites []uint16) []uint16 {
	out := slices.Clone(suites)
	if suites == nil {
		for _, cs := range tls.CipherSuites() {
			if slices.ContainsFunc(cs.SupportedVersions, func(v uint16) bool { return v <= tls.VersionTLS12 }) {
				out = append(out, cs.ID)
			}
		}
	}
	for _, id := range rsaKeyExchangeSuites {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// offersRSAKeyExchange reports whether a tls.Config with these CipherSuites offers an RSA key
// exchange suite (nil: Go's defaults, which do not).
func offersRSAKeyExchange(suites []uint16) bool {
	return slices.ContainsFunc(suites, func(id uint16) bool { return slices.Contains(rsaKeyExchangeSuites, id) })
}

// rsaKeyExchangeWanted reports whether the options or the DSN turn RSA key exchange on.
func rsaKeyExchangeWanted(cfg msdsn.Config, o options) (bool, error) {
	if o.rsaKeyExchange {
		return true, nil
	}
	return rsaKeyExchangeParamValue(cfg.Parameters)
}
