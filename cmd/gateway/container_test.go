package main

import (
	"go/version"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/cmd/internal/app"
)

// composeService is what the test reads of a compose.yaml service.
type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Command     any               `yaml:"command"` // a list, or a shell line
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	PullPolicy  string            `yaml:"pull_policy"`
	Healthcheck struct {
		Test    []string `yaml:"test"`
		Disable bool     `yaml:"disable"`
	} `yaml:"healthcheck"`
	Deploy struct {
		Replicas int `yaml:"replicas"`
	} `yaml:"deploy"`
}

func (s composeService) replicas() int { return max(1, s.Deploy.Replicas) }

// argv is the command as a list; nil when it is a shell line.
func (s composeService) argv() []string {
	list, ok := s.Command.([]any)
	if !ok {
		return nil
	}
	var out []string
	for _, a := range list {
		out = append(out, a.(string))
	}
	return out
}

// shellLine is the command when it is one string.
func (s composeService) shellLine() string { v, _ := s.Command.(string); return v }

// interpolation is compose's ${VAR:?message} and ${VAR:-default}.
var interpolation = regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)(?::?([-?])([^}]*))?\}`)

// composeEnv is a service's environment as the binary would see it, with
// compose's variables given test values: required ones a 32-byte secret.
func composeEnv(env map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = interpolation.ReplaceAllStringFunc(v, func(m string) string {
			p := interpolation.FindStringSubmatch(m)
			if p[2] == "-" {
				return p[3]
			}
			return testSecret
		})
	}
	return out
}

func readCompose(t *testing.T) map[string]composeService {
	t.Helper()
	b, err := os.ReadFile("../../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return f.Services
}

// TestComposeFile checks compose.yaml against the binaries: every
// gateway and worker service's command and variables are ones the binary
// reads, with values it accepts (parsed by the binaries' own config
// code); two gateways and two workers share one Redis Cluster of three
// masters that a one-shot service creates; shared settings agree.
func TestComposeFile(t *testing.T) {
	services := readCompose(t)
	gatewayEnv := map[string]bool{}
	for _, s := range (&Config{}).settings() {
		gatewayEnv[s.Env] = true
	}
	workerEnv := map[string]bool{}
	for _, s := range (&app.WorkerConfig{}).Settings() {
		workerEnv[s.Env] = true
	}
	count := map[string]int{}
	var redisNodes []string
	var shared map[string]string // the first gateway's or worker's shared settings
	builders := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(services)) {
		s := services[name]
		argv, env := s.argv(), composeEnv(s.Environment)
		binary := ""
		if len(argv) > 0 {
			binary = argv[0]
		}
		switch {
		case binary == "gateway":
			checkNames(t, name, env, gatewayEnv)
			if _, err := parseConfig(argv[1:], mapEnv(env), io.Discard); err != nil {
				t.Errorf("%s: the gateway refuses its settings: %v", name, err)
			}
		case binary == "worker":
			checkNames(t, name, env, workerEnv)
			if _, err := app.ParseWorker(argv[1:], mapEnv(env), io.Discard); err != nil {
				t.Errorf("%s: the worker refuses its settings: %v", name, err)
			}
		case strings.HasPrefix(s.Image, "redis:7") && strings.Contains(s.shellLine(), "--cluster-enabled yes"):
			redisNodes = append(redisNodes, name)
			continue
		default:
			continue
		}
		count[binary] += s.replicas()
		checkImage(t, name, s, binary, env, builders)
		if !slices.Contains(s.Volumes, "media:"+env["MEDIA_DIR"]) {
			t.Errorf("%s: MEDIA_DIR %q is not the shared media volume (%v)", name, env["MEDIA_DIR"], s.Volumes)
		}
		shared = checkShared(t, name, env, workerEnv, shared)
	}
	if len(builders) != 1 {
		t.Errorf("services building the image: %v, want one (the others run its tag)", builders)
	}
	if count["gateway"] != 2 || count["worker"] != 2 || len(redisNodes) != 3 {
		t.Fatalf("%d gateways, %d workers, Redis nodes %v: want 2, 2 and 3", count["gateway"], count["worker"], redisNodes)
	}
	checkCluster(t, services, redisNodes, shared)
}

// checkImage: the service runs the image socialgw, built by one service
// only (builders), the others never pulling it; a gateway is probed by
// its healthcheck subcommand on its own listener, a worker (no HTTP) not
// at all.
func checkImage(t *testing.T, name string, s composeService, binary string, env map[string]string, builders map[string]bool) {
	t.Helper()
	switch {
	case s.Image != "socialgw":
		t.Errorf("%s: image %q, want socialgw", name, s.Image)
	case s.Build == ".":
		builders[name] = true
	case s.Build != nil || s.PullPolicy != "never":
		t.Errorf("%s: build %v, pull_policy %q: want the tag another service builds, never pulled", name, s.Build, s.PullPolicy)
	}
	if binary == "worker" {
		if !s.Healthcheck.Disable {
			t.Errorf("%s: a worker has no HTTP listener: its healthcheck must be disabled", name)
		}
		return
	}
	port := "8080"
	if a := env["LISTEN_ADDR"]; a != "" {
		port = a[strings.LastIndex(a, ":")+1:]
	}
	if want := healthcheckCmd(port); !slices.Equal(s.Healthcheck.Test, append([]string{"CMD"}, want...)) {
		t.Errorf("%s: healthcheck %q, want CMD %q", name, s.Healthcheck.Test, want)
	}
}

// healthcheckCmd is the container's probe of a gateway listening on port.
func healthcheckCmd(port string) []string {
	return []string{"gateway", "healthcheck", "http://127.0.0.1:" + port + "/readyz"}
}

// checkNames fails for a variable the binary does not read.
func checkNames(t *testing.T, service string, env map[string]string, known map[string]bool) {
	t.Helper()
	for k := range env {
		if !known[k] {
			t.Errorf("%s: %s is no setting of its binary", service, k)
		}
	}
}

// checkShared compares the settings gateways and workers must agree on
// (every variable the worker reads) with those of the first service.
func checkShared(t *testing.T, service string, env map[string]string, workerEnv map[string]bool, first map[string]string) map[string]string {
	t.Helper()
	mine := map[string]string{}
	for k, v := range env {
		if workerEnv[k] && k != "FANOUT_CONSUMER" && k != "STATS_EVERY" {
			mine[k] = v
		}
	}
	if first != nil && !maps.Equal(first, mine) {
		t.Errorf("%s: shared settings %v differ from %v", service, mine, first)
	}
	return mine
}

// checkCluster: REDIS_URL names the three nodes as a cluster, the queue
// has a shard per master, and a one-shot service creates the cluster of
// those nodes with no replicas.
func checkCluster(t *testing.T, services map[string]composeService, nodes []string, shared map[string]string) {
	t.Helper()
	opts, err := redis.ParseClusterURL(shared["REDIS_URL"])
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	var want []string
	for _, n := range nodes {
		want = append(want, n+":6379")
	}
	if slices.Sort(opts.Addrs); !slices.Equal(opts.Addrs, want) || shared["REDIS_CLUSTER"] != "true" {
		t.Errorf("REDIS_URL names %v (REDIS_CLUSTER %q), want the cluster %v", opts.Addrs, shared["REDIS_CLUSTER"], want)
	}
	if n, _ := strconv.Atoi(shared["FANOUT_SHARDS"]); n < len(nodes) {
		t.Errorf("FANOUT_SHARDS %q: want at least one per master (%d)", shared["FANOUT_SHARDS"], len(nodes))
	}
	creators := 0
	for name, s := range services {
		line := s.shellLine()
		if !strings.Contains(line, "redis-cli --cluster create") {
			continue
		}
		creators++
		if !strings.Contains(line, "--cluster-replicas 0") {
			t.Errorf("%s: want three masters (--cluster-replicas 0): %s", name, line)
		}
		// A cluster whose slots are assigned may still be down (its
		// nodes' addresses changed): only cluster_state:ok is done.
		if !strings.Contains(line, "grep -q cluster_state:ok") || !strings.Contains(line, "cluster meet") {
			t.Errorf("%s: want a wait for cluster_state:ok and a CLUSTER MEET at the current addresses: %s", name, line)
		}
		for _, n := range nodes {
			if !strings.Contains(line, "$$(ip "+n+"):6379") || !strings.Contains(line, `nodes="`) || !strings.Contains(line, n) {
				t.Errorf("%s does not join %s: %s", name, n, line)
			}
		}
	}
	if creators != 1 {
		t.Errorf("%d services create the cluster, want one", creators)
	}
}

// TestDockerfile: the image builds the gateway and the worker, both
// existing main packages, with a Go at least go.mod's, and runs them on
// a minimal image as a non-root user; .dockerignore keeps every Go
// source in the build context.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	built := map[string]bool{}
	for _, m := range regexp.MustCompile(`go build [^\n]*-o /out/(\w+) \./cmd/(\w+)`).FindAllStringSubmatch(text, -1) {
		if m[1] != m[2] {
			t.Errorf("binary %s built from ./cmd/%s", m[1], m[2])
		}
		if src, err := os.ReadFile(filepath.Join("..", m[2], "main.go")); err != nil || !strings.Contains(string(src), "\npackage main\n") {
			t.Errorf("./cmd/%s is not a main package", m[2])
		}
		if !regexp.MustCompile(`COPY --from=build [^\n]*/out/` + m[1] + `\b`).MatchString(text) {
			t.Errorf("%s is built but not copied into the runtime image", m[1])
		}
		built[m[2]] = true
	}
	if !built["gateway"] || !built["worker"] {
		t.Errorf("the Dockerfile builds %v, want gateway and worker", built)
	}
	checkGoVersion(t, text)
	stages := strings.Split(text, "\nFROM ")
	final := stages[len(stages)-1]
	if !strings.HasPrefix(final, "gcr.io/distroless/static") && !strings.HasPrefix(final, "scratch") {
		t.Errorf("runtime image %q: want distroless/static or scratch", strings.SplitN(final, "\n", 2)[0])
	}
	user := regexp.MustCompile(`(?m)^USER (\S+)`).FindStringSubmatch(final)
	if user == nil || strings.HasPrefix(user[1], "0") || strings.HasPrefix(user[1], "root") {
		t.Errorf("runtime user %v: want a non-root user", user)
	}
	healthcheck := regexp.MustCompile(`(?m)^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$`).FindStringSubmatch(final)
	if want := `["` + strings.Join(healthcheckCmd("8080"), `", "`) + `"]`; healthcheck == nil || healthcheck[1] != want {
		t.Errorf("HEALTHCHECK %v: want CMD %s", healthcheck, want)
	}
	checkDockerignore(t)
}

// checkGoVersion: the build stage's Go is at least go.mod's.
func checkGoVersion(t *testing.T, dockerfile string) {
	t.Helper()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^go (\S+)`).FindStringSubmatch(string(mod))
	got := regexp.MustCompile(`(?m)^FROM golang:(\d+\.\d+(?:\.\d+)?)\S* AS build`).FindStringSubmatch(dockerfile)
	if want == nil || got == nil || version.Compare("go"+got[1], "go"+want[1]) < 0 {
		t.Errorf("build stage Go %v, go.mod %v: want a golang image at least go.mod's", got, want)
	}
}

// checkDockerignore: no pattern of .dockerignore drops a Go source file
// or go.mod/go.sum from the build context.
func checkDockerignore(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, strings.TrimPrefix(strings.TrimPrefix(line, "/"), "**/"))
		}
	}
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.Name() == "node_modules" || d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel("../..", path)
		if d.IsDir() || (!strings.HasSuffix(rel, ".go") && rel != "go.mod" && rel != "go.sum") {
			return nil
		}
		for _, p := range patterns {
			for dir := rel; dir != "."; dir = filepath.Dir(dir) {
				if ok, _ := filepath.Match(p, dir); ok {
					t.Errorf(".dockerignore's %q drops %s from the build", p, rel)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
