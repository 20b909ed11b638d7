package integration

import (
	"context"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// target is a server the suites run against.
type target struct {
	name string
	base string // a go-mssqldb DSN without encryption or packet-size settings
	// realServer is true for SQL Server itself; false for tdstest.
	realServer bool
}

// dsn returns the target's DSN with params ("key=value") set, replacing values the base
// DSN already has. URL DSNs get query parameters, ADO DSNs ";key=value" pairs.
func (tg target) dsn(params ...string) string {
	if u, err := url.Parse(tg.base); err == nil && u.Scheme == "sqlserver" {
		q := u.Query()
		for _, p := range params {
			k, v, _ := strings.Cut(p, "=")
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	s := strings.TrimRight(tg.base, ";")
	for _, p := range params {
		s += ";" + p
	}
	return s
}

// forEachTarget runs fn as a subtest for every available target. A target that is not available
// here is a skipped subtest whose message says why and how to make it available, starting with
// "missing: " so that the skip lines of `make test` (scripts/testsummary) count it as something
// this machine lacks.
func forEachTarget(t *testing.T, fn func(t *testing.T, tg target)) {
	t.Helper()
	list, missing := targets(t)
	for _, tg := range list {
		t.Run(tg.name, func(t *testing.T) { fn(t, tg) })
	}
	for _, m := range missing {
		t.Run(m.name, func(t *testing.T) { t.Skip("missing: " + m.why) })
	}
}

// missingTarget is a target that is not available here, and why.
type missingTarget struct{ name, why string }

func targets(t *testing.T) ([]target, []missingTarget) {
	t.Helper()
	// A tdstest server per test keeps the goroutine accounting of each test its own.
	srv, err := tdstest.NewServer(tdstest.Config{Encryption: tdstest.EncryptOff, Logf: t.Logf})
	if err != nil {
		t.Fatalf("start tdstest server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	list := []target{{name: "tdstest", base: srv.DSN()}}
	var missing []missingTarget

	if dsn := os.Getenv("MSSQL_DSN"); dsn != "" {
		list = append(list, target{name: "MSSQL_DSN", base: dsn, realServer: true})
	} else {
		missing = append(missing, missingTarget{"MSSQL_DSN", "MSSQL_DSN not set: set it to a SQL Server's DSN to run the suites against that server too"})
	}
	if dsn, why := containerDSN(); dsn != "" {
		list = append(list, target{name: "container", base: dsn, realServer: true})
	} else {
		missing = append(missing, missingTarget{"container", why})
	}
	return list, missing
}

// The SQL Server container is started at most once per test binary, on first use.
var container struct {
	once sync.Once
	c    testcontainers.Container
	dsn  string
	why  string // why there is no container, when dsn is empty
}

const containerPassword = "tdsbridge-Passw0rd"

// defaultImage is Microsoft's SQL Server 2022 image, the one docker-compose.yml uses too;
// MSSQL_IMAGE overrides it (a mirror, another tag).
const defaultImage = "mcr.microsoft.com/mssql/server:2022-latest"

// containerImage returns MSSQL_IMAGE, or defaultImage when it is unset or empty.
func containerImage() string {
	if image := os.Getenv("MSSQL_IMAGE"); image != "" {
		return image
	}
	return defaultImage
}

// containerDSN starts SQL Server 2022 with testcontainers-go when a Docker engine answers, and
// returns its DSN; otherwise "" and a sentence saying why.
func containerDSN() (dsn, why string) {
	container.once.Do(startContainer)
	return container.dsn, container.why
}

func startContainer() {
	image := containerImage()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := dockerHealthy(ctx); err != nil {
		container.why = "no Docker engine reachable for the SQL Server container (" + image + "): " +
			err.Error() + "; run `make integration` where Docker runs"
		return
	}
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        image,
			ExposedPorts: []string{"1433/tcp"},
			Env: map[string]string{
				"ACCEPT_EULA":       "Y",
				"MSSQL_PID":         "Developer",
				"MSSQL_SA_PASSWORD": containerPassword,
			},
			WaitingFor: wait.ForLog("SQL Server is now ready for client connections").
				WithStartupTimeout(3 * time.Minute),
		},
		Started: true,
	})
	if err != nil {
		container.why = "container target (" + image + ") failed to start: " + err.Error()
		if c != nil {
			_ = testcontainers.TerminateContainer(c)
		}
		return
	}
	container.c = c
	host, err := c.Host(ctx)
	if err == nil {
		var port string
		if p, perr := c.MappedPort(ctx, "1433/tcp"); perr == nil {
			port = p.Port()
		} else {
			err = perr
		}
		u := url.URL{Scheme: "sqlserver", User: url.UserPassword("sa", containerPassword), Host: host + ":" + port}
		container.dsn = u.String()
	}
	if err != nil {
		container.why = "container target: cannot reach the started container: " + err.Error()
	}
}

// dockerHealthy reports whether a Docker engine answers.
func dockerHealthy(ctx context.Context) (err error) {
	defer func() {
		// The provider lookup panics on some hosts without Docker; treat that as "no Docker".
		if r := recover(); r != nil {
			err = &noDockerError{r}
		}
	}()
	p, err := testcontainers.ProviderDefault.GetProvider()
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Health(ctx)
}

type noDockerError struct{ cause any }

func (e *noDockerError) Error() string { return "docker provider unavailable" }

// stopContainer terminates the container if one was started and reports whether one was.
func stopContainer() bool {
	if container.c == nil {
		return false
	}
	_ = testcontainers.TerminateContainer(container.c)
	return true
}
