// Package mailtest runs a real SMTP server for tests: Mailpit
// (github.com/axllent/mailpit), started on free local ports and read
// through its HTTP API, as internal/redistest runs a real Redis. The code
// under test sends to it with the gateway's own SMTP sender
// (internal/mail), exactly as it sends to a mail server in production.
//
// The binary is MAILPIT_BIN when set, else Mailpit built once into the
// user's cache directory (`go install github.com/axllent/mailpit@` the
// Version below; .ci/run does it before the tests). The build takes
// minutes, so the fast tier (-short) skips a test that would start it
// and finds no binary.
package mailtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redistest"
)

// Version is the Mailpit the tests run.
const Version = "v1.33.1"

// Server is a running Mailpit, shared by a package's tests: each test
// mails addresses of its own (Address) and reads only those.
type Server struct {
	// SMTPURL is the SMTP_URL that sends to it.
	SMTPURL string
	api     string
}

var (
	once    sync.Once
	shared  *Server
	initErr error
	cmd     *exec.Cmd
	logs    redistest.Buffer
)

// Start returns the package's Mailpit, starting it on first use. It is
// stopped by Stop (call it from TestMain) or when the process exits.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := Binary()
	if err != nil && testing.Short() {
		tb.Skipf("mailtest: no Mailpit binary in -short (%v); the full tier builds it", err)
	}
	once.Do(func() { shared, initErr = start() })
	if initErr != nil {
		tb.Fatalf("mailtest: %v (binary %q)\n%s", initErr, bin, logs.String())
	}
	return shared
}

// Stop ends the package's Mailpit, if one was started.
func Stop() {
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

// Binary returns the path of the Mailpit binary, building it into the
// user's cache directory when neither MAILPIT_BIN nor an earlier build
// has one; in -short mode it only looks.
func Binary() (string, error) {
	if p := os.Getenv("MAILPIT_BIN"); p != "" {
		return p, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "socialgw", "mailpit-"+Version)
	bin := filepath.Join(dir, "mailpit")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if testing.Short() {
		return bin, fmt.Errorf("%s not built", bin)
	}
	return bin, build(dir)
}

// build runs go install into dir under a lock, so that test binaries of
// several packages build it once.
func build(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "mailpit")); err == nil {
		return nil // another package built it meanwhile
	}
	c := exec.Command("go", "install", "github.com/axllent/mailpit@"+Version)
	c.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-buildvcs=false")
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("build Mailpit: %v\n%s", err, out)
	}
	return nil
}

func start() (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	smtpAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	httpAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd = exec.Command(bin, "--smtp", smtpAddr, "--listen", httpAddr,
		"--smtp-auth-accept-any", "--smtp-auth-allow-insecure", "--disable-version-check", "--quiet")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	// Mailpit ends with the test binary, even one killed before Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{SMTPURL: "smtp://" + smtpAddr, api: "http://" + httpAddr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.api + "/api/v1/info")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			Stop()
			return nil, fmt.Errorf("mailpit did not answer on %s", httpAddr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freeAddr returns a local address no one listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

var addrSeq struct {
	sync.Mutex
	n int
}

// Address returns an address no other test of the process mails.
func Address(tb testing.TB, name string) string {
	addrSeq.Lock()
	defer addrSeq.Unlock()
	addrSeq.n++
	return fmt.Sprintf("%s.%d.%d@example.com", strings.ToLower(name), os.Getpid(), addrSeq.n)
}

// Message is an e-mail Mailpit received.
type Message struct {
	ID      string
	Subject string
	To      []struct{ Address string }
	From    struct{ Address string }
	Text    string
}

// Messages returns the e-mails received for to, oldest first, with
// their text.
func (s *Server) Messages(tb testing.TB, to string) []Message {
	tb.Helper()
	var list struct{ Messages []Message }
	s.get(tb, "/api/v1/search?limit=200&query="+url.QueryEscape("to:"+to), &list)
	var out []Message
	for i := len(list.Messages) - 1; i >= 0; i-- {
		m := list.Messages[i]
		if len(m.To) == 0 || !strings.EqualFold(m.To[0].Address, to) {
			continue
		}
		s.get(tb, "/api/v1/message/"+m.ID, &m)
		out = append(out, m)
	}
	return out
}

// Wait waits until n e-mails for to have arrived, and returns them.
func (s *Server) Wait(tb testing.TB, to string, n int) []Message {
	tb.Helper()
	var got []Message
	redistest.Eventually(tb, 10*time.Second, fmt.Sprintf("%d e-mails to %s", n, to), func() bool {
		got = s.Messages(tb, to)
		return len(got) >= n
	})
	return got
}

var tokenLine = regexp.MustCompile(`(?m)^token: (\S+)\s*$`)

// Token is the token an e-mail carries on its "token: …" line ("" when
// none).
func Token(m Message) string {
	if t := tokenLine.FindStringSubmatch(m.Text); t != nil {
		return t[1]
	}
	return ""
}

func (s *Server) get(tb testing.TB, path string, into any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.api+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("mailtest: GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("mailtest: GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		tb.Fatalf("mailtest: GET %s: %v", path, err)
	}
}
