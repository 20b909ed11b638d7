package mssqlbridge

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// poolLoad is a certificate pool loaded once, in a background goroutine, and waited for by the
// handshakes that need it. It is safe for concurrent use; the pool it returns is shared and
// must not be modified (crypto/tls only reads it).
type poolLoad struct {
	once sync.Once
	load func() (*x509.CertPool, error)
	done chan struct{} // closed when pool and err are set

	// set before done is closed; read only after
	pool *x509.CertPool
	err  error
}

func newPoolLoad(load func() (*x509.CertPool, error)) *poolLoad {
	return &poolLoad{load: load, done: make(chan struct{})}
}

// start begins loading in a new goroutine, the first time it is called; later calls do
// nothing. It does not block.
func (l *poolLoad) start() {
	l.once.Do(func() {
		go func() {
			l.pool, l.err = l.load()
			close(l.done)
		}()
	})
}

// wait starts the load if needed and blocks until it has finished or ctx is done.
func (l *poolLoad) wait(ctx context.Context) (*x509.CertPool, error) {
	l.start()
	select {
	case <-l.done:
		return l.pool, l.err
	default:
	}
	select {
	case <-l.done:
		return l.pool, l.err
	case <-ctx.Done():
		return nil, fmt.Errorf("mssqlbridge: waiting for the certificate pool: %w", ctx.Err())
	}
}

// systemRoots is the process-wide system root pool. Nothing loads it at package
// initialization: the first connector whose connections will verify a certificate against
// the system roots starts it (NewConnector), so that its cost (docs/design.md, "Loading the
// system roots") overlaps the application's own start-up instead of delaying the first
// handshake.
var systemRoots = newPoolLoad(loadSystemRoots)

func loadSystemRoots() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		return nil, fmt.Errorf("mssqlbridge: load system root certificates: %w", err)
	}
	return pool, nil
}

// newFilePoolLoad returns a loader for the DSN's certificate parameter, with msdsn's rules: a
// ".pem" file holds one or more PEM certificates, a ".der" file one DER certificate; other
// extensions are refused. Errors are *CertificateFileError naming the file. The returned
// PEM bytes are kept for the hostNameInCertificate-with-colon check (see tlsconfig.go).
func newFilePoolLoad(file string) *filePoolLoad {
	f := &filePoolLoad{file: file}
	f.poolLoad = newPoolLoad(f.read)
	return f
}

// filePoolLoad is a poolLoad for a certificate file that also keeps the file's certificates.
type filePoolLoad struct {
	*poolLoad
	file  string
	certs []*x509.Certificate // set by read before done is closed
}

func (f *filePoolLoad) read() (*x509.CertPool, error) {
	fail := func(err error) (*x509.CertPool, error) {
		return nil, &CertificateFileError{File: f.file, Err: err}
	}
	data, err := os.ReadFile(f.file)
	if err != nil {
		return fail(err)
	}
	switch ext := strings.ToLower(filepath.Ext(f.file)); ext {
	case ".pem":
		for rest := data; ; {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if block.Type != "CERTIFICATE" {
				continue
			}
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return fail(err)
			}
			f.certs = append(f.certs, c)
		}
	case ".der":
		c, err := x509.ParseCertificate(data)
		if err != nil {
			return fail(err)
		}
		f.certs = append(f.certs, c)
	default:
		return fail(fmt.Errorf("certificate type %q is not supported (want .pem or .der)", ext))
	}
	if len(f.certs) == 0 {
		return fail(errors.New("no certificate found"))
	}
	pool := x509.NewCertPool()
	for _, c := range f.certs {
		pool.AddCert(c)
	}
	return pool, nil
}
