package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redistest"
)

// gatewayBinary puts the gateway's binary in dir as ./gateway: the test
// binary, which behaves as the gateway's with childEnv set to
// childAsBinary (add gatewayBinaryEnv to the environment it runs with).
func gatewayBinary(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gateway")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// gatewayBinaryEnv is what gatewayBinary's binary needs in its
// environment.
const gatewayBinaryEnv = childEnv + "=" + childAsBinary

// startedScript is a shell script started in a process group of its own,
// its stderr read line by line.
type startedScript struct {
	cmd   *exec.Cmd
	lines chan string // stderr, closed at exit
	done  chan struct{}
}

// startScript runs script with sh in dir with env, and stops its process
// group when the test ends.
func startScript(t *testing.T, dir, script string, env []string) *startedScript {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &startedScript{cmd: cmd, lines: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(errp)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
		_ = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Errorf("%q still running 15s after SIGTERM", script)
		}
	})
	return s
}

// listening reads JSON log lines until the gateway's "listening" line
// and returns its url; every line read must be a JSON object.
func (s *startedScript) listening(t *testing.T) string {
	t.Helper()
	var seen []string
	timeout := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("exited before it was ready:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, line)
			var rec struct{ Msg, URL string }
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("a log line that is not JSON: %q", line)
			}
			if rec.Msg == "listening" {
				return rec.URL
			}
		case <-timeout:
			t.Fatalf("not listening after 60s:\n%s", strings.Join(seen, "\n"))
		}
	}
}

// runningExample is the first shell block of docs/operations.md's
// "Running" section.
func runningExample(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)\n## Running\n.*?```sh\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal(`docs/operations.md has no shell block under "## Running"`)
	}
	return string(m[1])
}

// TestBinary runs the gateway's binary the ways the docs say.
func TestBinary(t *testing.T) {
	redistest.Slow(t, "starts gateway processes")
	bin := gatewayBinary(t, t.TempDir())
	t.Run("Running example of docs/operations.md", func(t *testing.T) { testRunningExample(t, bin) })
	t.Run("a refusal in production is a JSON line", func(t *testing.T) { testRefusalLogged(t, bin) })
}

// testRefusalLogged: a production start missing its secrets prints only
// JSON lines, the refusal among them, and exits 1.
func testRefusalLogged(t *testing.T, bin string) {
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), gatewayBinaryEnv, "PRODUCTION=true"}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1:\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range lines {
		if !json.Valid([]byte(line)) {
			t.Errorf("a line that is not JSON: %q", line)
		}
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, `"level":"ERROR"`) || !strings.Contains(last, "needs JWT_SECRET") {
		t.Errorf("last line %q: want the refusal", last)
	}
}

// testRunningExample runs the example as written, with the test's Redis,
// secrets and media directory in place of the example's, on a free port.
func testRunningExample(t *testing.T, bin string) {
	script := runningExample(t)
	dir := filepath.Dir(bin)
	secrets := filepath.Join(t.TempDir(), "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, secret := range map[string]string{"jwt": testSecret, "media": testSecret + "-media"} {
		if err := os.WriteFile(filepath.Join(secrets, name), []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	redisEnv := emptyDB(t, 12)
	for old, repl := range map[string]string{
		// Quoted: a cluster's URL holds & and ?, which the shell reads.
		"redis://redis.internal:6379/0": "'" + redisEnv["REDIS_URL"] + "'",
		"/run/secrets":                  secrets,
		"/var/lib/socialgw/media":       filepath.Join(t.TempDir(), "media"),
	} {
		if !strings.Contains(script, old) {
			t.Fatalf("the example no longer holds %q: update this test\n%s", old, script)
		}
		script = strings.ReplaceAll(script, old, repl)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LISTEN_ADDR=127.0.0.1:0", gatewayBinaryEnv}
	for k, v := range redisEnv {
		if k != "REDIS_URL" {
			env = append(env, k+"="+v)
		}
	}
	p := startScript(t, dir, script, env)
	url := p.listening(t)
	// The container's probe, on the running gateway and on nothing.
	for _, probe := range []struct {
		url  string
		code int
	}{{url + "/readyz", 0}, {url + "/nowhere", 1}, {"http://" + closedAddr(t) + "/readyz", 1}} {
		cmd := exec.Command(bin, "healthcheck", probe.url)
		cmd.Env = []string{gatewayBinaryEnv}
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != probe.code {
			t.Errorf("gateway healthcheck %s: exit %d (%v), want %d\n%s", probe.url, code, err, probe.code, out)
		}
	}
}
