// Package testcert makes throwaway X.509 certificates for tests and for the
// embedded test server: a root CA, intermediates under it, server and client
// leaf certificates issued by any of them, and self-signed certificates.
//
// Every certificate is valid from an hour before "now" (time.Now, or the
// time given with WithTime) for 24 hours after it, has a random 120-bit
// serial number and, unless a leaf asks for RSA, an ECDSA P-256 key. Keys
// come from crypto/rand; nothing is written to disk.
//
// A CA is immutable once made and safe for concurrent use: Issue and
// Intermediate may be called from several goroutines.
//
// Typical use:
//
//	ca, err := testcert.NewCA("example CA")
//	...
//	server, err := ca.Issue(testcert.LeafOptions{}) // localhost, 127.0.0.1, ::1
//	client, err := ca.Issue(testcert.LeafOptions{CommonName: "client", Client: true})
//	cfg := &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{client}}
//
// SelfSignedNegativeSerial makes a self-signed certificate with a negative
// serial number, as older SQL Server versions generate: Go 1.23 and later
// refuse to parse it unless GODEBUG x509negativeserial=1 is set.
//
// Errors are prefixed with "testcert: ".
package testcert
