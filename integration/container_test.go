package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// The container targets, started with testcontainers-go at most once per test binary, on first
// use, and terminated by TestMain:
//
//   - sqlserver-container: SQL Server 2022 (defaultImage, or MSSQL_IMAGE), tried first; an image
//     that is neither here nor pullable is a skip that says so;
//   - tdstest-container: the embedded server's command in the image that
//     docker/tdstest-server/Dockerfile describes, built here from a static binary of
//     tdstest/cmd/tdstest-server, so that it needs no registry.
//
// Both go through the same start (startContainer): ports published on 127.0.0.1 only, a wait
// strategy that ends with a SELECT 1 through go-mssqldb, the container's log attached to every
// failure, and termination. No engine answering is a skip of both; an engine that answers but
// cannot start a container is a failure.
var containers struct {
	once      sync.Once
	sqlserver listedTarget
	tdstest   listedTarget
	started   []testcontainers.Container // terminated by stopContainers
}

const (
	// containerPort is the port both images listen on inside their container.
	containerPort = "1433/tcp"

	sqlserverPassword = "tdsbridge-Passw0rd" // docker-compose.yml's default too

	// defaultImage is Microsoft's SQL Server 2022 image, the one docker-compose.yml uses too;
	// MSSQL_IMAGE overrides it (a mirror, another tag).
	defaultImage = "mcr.microsoft.com/mssql/server:2022-latest"

	// tdstestImage is the tag given to the image of docker/tdstest-server/Dockerfile, here and by
	// `make tdstest-image` (docker-compose.yml's tdstest service runs it).
	tdstestImageRepo = "tdsbridge/tdstest-server"
	tdstestImageTag  = "local"
)

// containerImage returns MSSQL_IMAGE, or defaultImage when it is unset or empty.
func containerImage() string {
	if image := os.Getenv("MSSQL_IMAGE"); image != "" {
		return image
	}
	return defaultImage
}

// containerTargets returns the two container targets, starting them on first use.
func containerTargets() []listedTarget {
	containers.once.Do(startContainers)
	return []listedTarget{containers.sqlserver, containers.tdstest}
}

func startContainers() {
	containers.sqlserver.name = "sqlserver-container"
	containers.tdstest.name = "tdstest-container"
	// Before testcontainers-go reads its configuration, once per process.
	reaperNote := disableReaperIfUnavailable()
	if reaperNote != "" {
		fmt.Fprintln(os.Stderr, "integration: "+reaperNote)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli, err := engine(ctx)
	if err != nil {
		why := "no Docker engine answers for the container targets (testcontainers-go: " + err.Error() +
			"); start one (.ci/run starts Debian's dockerd) and run `make integration` again"
		containers.sqlserver.missing, containers.tdstest.missing = why, why
		return
	}
	defer cli.Close()

	image := containerImage()
	if err := havePulled(cli, image, 20*time.Minute); err != nil {
		containers.sqlserver.missing = "SQL Server image " + image + " is not on this Docker engine and cannot be pulled (" +
			err.Error() + "); pull it where a registry answers, or set MSSQL_IMAGE to an image the engine has"
	} else {
		containers.sqlserver.target, containers.sqlserver.broken = startContainer(containers.sqlserver.name,
			testcontainers.ContainerRequest{
				Image: image,
				Env: map[string]string{
					"ACCEPT_EULA":       "Y",
					"MSSQL_PID":         "Developer",
					"MSSQL_SA_PASSWORD": sqlserverPassword,
				},
			},
			wait.ForLog("SQL Server is now ready for client connections"), "sa", sqlserverPassword, 4*time.Minute)
	}

	req, err := tdstestImageRequest()
	if err != nil {
		containers.tdstest.broken = "tdstest-container: " + err.Error()
		return
	}
	containers.tdstest.target, containers.tdstest.broken = startContainer(containers.tdstest.name, req,
		wait.ForLog("relay: "), tdstest.DefaultUser, tdstest.DefaultPassword, time.Minute)
}

// disableReaperIfUnavailable turns testcontainers' reaper (Ryuk, a container of its own that
// removes the others if this process dies) off when its image is neither on the engine nor
// pullable, since a reaper that cannot start fails every container; TestMain terminates the
// containers in its place. TESTCONTAINERS_RYUK_DISABLED, when set, is left as it is. It returns a
// note for the log, or "". It must run before anything reads testcontainers' configuration,
// so it asks through a client of its own, at the two places testcontainers-go looks first: the
// engine DOCKER_HOST names, then the default socket. (Where testcontainers-go finds an engine
// elsewhere and the reaper cannot start, startContainer says so.)
func disableReaperIfUnavailable() string {
	if _, set := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); set {
		return ""
	}
	for _, opt := range []client.Opt{client.FromEnv, client.WithHost(client.DefaultDockerHost)} {
		cli, err := client.New(opt)
		if err != nil {
			continue
		}
		note, answered := reaperNote(cli)
		_ = cli.Close()
		if answered {
			return note
		}
	}
	return "" // no engine: the container targets skip
}

// reaperNote turns the reaper off when cli's engine answers but has no reaper image and cannot
// pull one, and returns a note saying so; answered is false when the engine does not answer.
func reaperNote(cli *client.Client) (note string, answered bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return "", false
	}
	//lint:ignore SA1019 deprecated, yet still the image testcontainers-go starts as its reaper, and the only exported name for it
	if err := havePulled(cli, testcontainers.ReaperDefaultImage, time.Minute); err != nil {
		_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
		return "reaper off (TESTCONTAINERS_RYUK_DISABLED=true): " + err.Error() +
			"; TestMain terminates the containers, and a killed test process leaves them running", true
	}
	return "", true
}

// engine returns testcontainers-go's client for the engine it finds, once that engine has
// answered.
func engine(ctx context.Context) (cli *testcontainers.DockerClient, err error) {
	defer func() {
		// The provider lookup panics on some hosts without Docker; treat that as "no Docker".
		if r := recover(); r != nil {
			err = fmt.Errorf("docker provider unavailable: %v", r)
		}
	}()
	return testcontainers.NewDockerClientWithOpts(ctx)
}

// imageClient is the part of the engine's client that havePulled uses.
type imageClient interface {
	ImageInspect(ctx context.Context, image string, opts ...client.ImageInspectOption) (client.ImageInspectResult, error)
	ImagePull(ctx context.Context, ref string, opts client.ImagePullOptions) (client.ImagePullResponse, error)
}

// havePulled makes sure image is on the engine: it is there already, or one pull, bounded by
// limit, brings it. testcontainers-go retries a failed pull for as long as its context allows,
// which offline means minutes spent on each image that no registry serves.
func havePulled(cli imageClient, image string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	_, err := cli.ImageInspect(ctx, image)
	if err == nil {
		return nil
	}
	if !errdefs.IsNotFound(err) {
		return fmt.Errorf("inspect %s: %w", image, err)
	}
	pull, err := cli.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return fmt.Errorf("pull %s: %w", image, err)
	}
	defer pull.Close()
	if err := pull.Wait(ctx); err != nil {
		return fmt.Errorf("pull %s: %w", image, err)
	}
	return nil
}

// tdstestImageRequest returns the request that builds docker/tdstest-server/Dockerfile, with a
// static tdstest-server binary for the engine's Linux, built from this working tree, and starts it.
func tdstestImageRequest() (testcontainers.ContainerRequest, error) {
	dir, err := os.MkdirTemp("", "tdstest-image-")
	if err != nil {
		return testcontainers.ContainerRequest{}, err
	}
	// The build context is sent to the engine when the container is created; the directory is
	// left for the system's temporary cleanup, a few megabytes.
	dockerfile, err := os.ReadFile(filepath.Join("..", "docker", "tdstest-server", "Dockerfile"))
	if err != nil {
		return testcontainers.ContainerRequest{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfile, 0o600); err != nil {
		return testcontainers.ContainerRequest{}, err
	}
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	build := exec.Command(goCmd, "build", "-trimpath", "-buildvcs=false", "-o", filepath.Join(dir, "tdstest-server"),
		"github.com/tdsbridge/tdsbridge/tdstest/cmd/tdstest-server")
	// The engine's architecture is assumed to be this machine's (a local engine).
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := build.CombinedOutput(); err != nil {
		return testcontainers.ContainerRequest{}, fmt.Errorf("build tdstest-server: %w\n%s", err, out)
	}
	return testcontainers.ContainerRequest{
		FromDockerfile: testcontainers.FromDockerfile{
			Context:   dir,
			Repo:      tdstestImageRepo,
			Tag:       tdstestImageTag,
			KeepImage: true, // docker-compose.yml's tdstest service runs the same tag
		},
	}, nil
}

// startContainer starts req with containerPort published on 127.0.0.1 only, waits for ready and
// then for a SELECT 1 through go-mssqldb on that address, and returns the target, or the target's
// name and why it failed, with the container's last log lines. Every test talks to 127.0.0.1, whatever host
// testcontainers-go reports (the engine's gateway when this process runs in a container).
func startContainer(name string, req testcontainers.ContainerRequest, ready wait.Strategy, user, password string, limit time.Duration) (target, string) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	dsnAt := func(port string) string {
		u := url.URL{Scheme: "sqlserver", User: url.UserPassword(user, password), Host: net.JoinHostPort("127.0.0.1", port)}
		return u.String()
	}
	req.ExposedPorts = []string{containerPort}
	req.HostConfigModifier = func(hc *container.HostConfig) {
		hc.PortBindings = network.PortMap{network.MustParsePort(containerPort): {{HostIP: netip.MustParseAddr("127.0.0.1")}}}
	}
	req.WaitingFor = wait.ForAll(ready,
		wait.ForSQL(containerPort, "sqlserver", func(_ string, port network.Port) string {
			return dsnAt(port.Port()) + "?encrypt=disable"
		}).WithStartupTimeout(limit),
	).WithDeadline(limit)
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	if c != nil {
		containers.started = append(containers.started, c)
	}
	if err != nil {
		why := fmt.Sprintf("%s failed to start: %v%s", name, err, logTail(c))
		if strings.Contains(err.Error(), "reaper") {
			why += "\n(testcontainers' reaper could not start: set TESTCONTAINERS_RYUK_DISABLED=true where its image cannot be pulled)"
		}
		return target{name: name}, why
	}
	port, err := c.MappedPort(ctx, containerPort)
	if err != nil {
		return target{name: name}, fmt.Sprintf("%s: no published port: %v%s", name, err, logTail(c))
	}
	return target{name: name, base: dsnAt(port.Port()), logs: func() string { return containerLog(c) }}, ""
}

// containerLog returns c's log (stdout and stderr, as docker logs gives them).
func containerLog(c testcontainers.Container) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := c.Logs(ctx)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer r.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(&b, "\n(log cut short: %v)", err)
	}
	return b.String()
}

// logTail returns the last lines of c's log, after a line that says so, or "" without c.
func logTail(c testcontainers.Container) string {
	if c == nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(containerLog(c), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return "\nlast lines of its log:\n" + strings.Join(lines, "\n")
}

// stopContainers terminates every container started, and reports whether one was.
func stopContainers() bool {
	for _, c := range containers.started {
		_ = testcontainers.TerminateContainer(c)
	}
	return len(containers.started) > 0
}
