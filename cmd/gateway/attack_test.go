package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/faulttest"
	"github.com/socialgw/gateway/internal/gqlguard/hostile"
	"github.com/socialgw/gateway/internal/redistest"
)

// gqlResult is one answer of the gateway.
type gqlResult struct {
	status  int
	code    string
	errors  int
	bytes   int64 // of the response body
	elapsed time.Duration
	err     error
}

func postQuery(client *http.Client, url, token, query string, vars map[string]any) gqlResult {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	// The time to the answer's headers: the gateway buffers a response
	// whole, so they come when it is ready (decoding it here is the
	// client's time, not the gateway's).
	start := time.Now()
	resp, err := client.Do(req)
	elapsed := time.Since(start)
	if err != nil {
		return gqlResult{err: err, elapsed: elapsed}
	}
	defer resp.Body.Close()
	var out struct {
		Data   json.RawMessage
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	r := gqlResult{status: resp.StatusCode, elapsed: elapsed}
	counted := &countingReader{r: resp.Body}
	if err := json.NewDecoder(counted).Decode(&out); err != nil {
		r.err = fmt.Errorf("status %d: body is not a GraphQL response: %w", resp.StatusCode, err)
	}
	r.bytes = counted.n
	r.errors = len(out.Errors)
	if len(out.Errors) > 0 {
		r.code, _ = out.Errors[0].Extensions["code"].(string)
		if r.code == "" {
			r.err = fmt.Errorf("an error without a code: %s", out.Errors[0].Message)
		}
	}
	return r
}

// rssBytes is the resident memory of process pid (field "VmRSS"), or its
// peak ("VmHWM").
func rssBytes(t testing.TB, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s", field)
	return 0
}

// TestAttackSuite sends every class of hostile document (internal/gqlguard/
// hostile) to a gateway process with its default limits, several copies
// of each at once, while a client keeps sending an ordinary timeline
// query. Every hostile request must get its error code within a fixed
// bound, every ordinary one its data, and the process's memory must come
// back near where it started once the burst is over.
func TestAttackSuite(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the process's memory from /proc")
	}
	const (
		copies = 4
		// Generous for a busy 2-core CI machine running the race
		// detector: the measured figures are milliseconds
		// (docs/performance.md).
		bound = 5 * time.Second
	)
	// A process of its own (built without the race detector): the memory
	// measured is the gateway's alone.
	gw := faulttest.StartGateway(t, "attacked", redistest.WithEnv(t, faulttest.Env{"REDIS_PREFIX": redistest.Prefix(t)}))
	url, pid := gw.URL, gw.Pid()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}

	userID := seedLongPosts(t, client, url)
	ordinary := `query($u: ID!) { userTimeline(userId: $u, first: 100) { edges { cursor node { id content createdAt author { id name } likesCount } } } }`
	vars := map[string]any{"u": userID}
	for range 20 {
		if r := postQuery(client, url, "", ordinary, vars); r.err != nil || r.errors > 0 {
			t.Fatalf("ordinary query: %+v", r)
		}
	}
	time.Sleep(2 * time.Second) // let the warm-up's garbage be collected
	baseline := rssBytes(t, pid, "VmRSS")

	// The burst: every class, copies of each at once, and ordinary
	// clients throughout.
	stop := make(chan struct{})
	var ordinaryWG sync.WaitGroup
	var mu sync.Mutex
	var ordinaryErrs []string
	served := 0
	for range 4 {
		ordinaryWG.Add(1)
		go func() {
			defer ordinaryWG.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := postQuery(client, url, "", ordinary, vars)
				mu.Lock()
				if r.err != nil || r.errors > 0 || r.status != http.StatusOK || r.elapsed > bound {
					ordinaryErrs = append(ordinaryErrs, fmt.Sprintf("%+v", r))
				} else {
					served++
				}
				mu.Unlock()
			}
		}()
	}
	classes := hostile.Classes()
	results := make([][]gqlResult, len(classes))
	var wg sync.WaitGroup
	for i, c := range classes {
		results[i] = make([]gqlResult, copies)
		for j := range copies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i][j] = postQuery(client, url, "", c.Doc, nil)
			}()
		}
	}
	// The memory amplification class: the largest responses the limits
	// allow (12 aliases of a page of 100 of the longest posts, about
	// 2.5 MB each), many at once. Each gets its data, or 503 and
	// RATE_LIMITED once the execution slots are taken for longer than the
	// queue wait.
	var large strings.Builder
	large.WriteString("query($u: ID!) { ")
	for i := range 12 {
		fmt.Fprintf(&large, "t%d: userTimeline(userId: $u, first: 100) { edges { node { content } } } ", i)
	}
	large.WriteString("}")
	const largeCopies = 80
	largeResults := make([]gqlResult, largeCopies)
	for j := range largeCopies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			largeResults[j] = postQuery(client, url, "", large.String(), vars)
		}()
	}
	wg.Wait()
	close(stop)
	ordinaryWG.Wait()
	largeServed := 0
	for _, r := range largeResults {
		switch {
		case r.err != nil:
			t.Errorf("large response: %v", r.err)
		case r.status == http.StatusOK && r.errors == 0:
			largeServed++
		case r.status == http.StatusServiceUnavailable && r.code == "RATE_LIMITED":
		default:
			t.Errorf("large response: %+v, want data or 503 RATE_LIMITED", r)
		}
	}
	if largeServed == 0 {
		t.Error("none of the large responses was served")
	}

	peak := rssBytes(t, pid, "VmHWM")
	for i, c := range classes {
		var slowest time.Duration
		for _, r := range results[i] {
			slowest = max(slowest, r.elapsed)
			switch {
			case r.err != nil:
				t.Errorf("%s: %v", c.Name, r.err)
			case r.code != c.Code:
				t.Errorf("%s: code %q, want %q", c.Name, r.code, c.Code)
			case r.elapsed > bound:
				t.Errorf("%s: answered in %v, want under %v", c.Name, r.elapsed, bound)
			}
		}
		t.Logf("%-28s slowest of %d answered in %v", c.Name, copies, slowest.Round(time.Millisecond))
	}
	if len(ordinaryErrs) > 0 {
		t.Errorf("%d ordinary queries failed during the attack, first: %s", len(ordinaryErrs), ordinaryErrs[0])
	}
	if served == 0 {
		t.Error("no ordinary query was served during the attack")
	}

	// Memory: back near the baseline within a few seconds.
	const slack = 48 << 20
	deadline := time.Now().Add(15 * time.Second)
	var now int64
	for {
		now = rssBytes(t, pid, "VmRSS")
		if now <= baseline+slack || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("RSS: baseline %d MiB, peak %d MiB, %d MiB after the burst; %d ordinary queries and %d of %d large ones served during it",
		baseline>>20, peak>>20, now>>20, served, largeServed, largeCopies)
	if now > baseline+slack {
		t.Errorf("RSS %d MiB did not come back within %d MiB of the baseline %d MiB", now>>20, slack>>20, baseline>>20)
	}
}

// seedLongPosts registers a user with a page of 100 of the longest posts
// (their JSON the longest too: "<" is escaped as \u003c) and returns the
// user's id.
func seedLongPosts(t testing.TB, client *http.Client, url string) (userID string) {
	t.Helper()
	reg := postQuery(client, url, "", `mutation { register(input: {name: "attacked", email: "attacked@example.com", password: "correct horse battery"}) { accessToken user { id } } }`, nil)
	if reg.err != nil || reg.errors > 0 {
		t.Fatalf("register: %+v", reg)
	}
	token, userID := login(t, client, url)
	for i := range 100 {
		r := postQuery(client, url, token, `mutation($c: String!) { createPost(input: {content: $c}) { id } }`,
			map[string]any{"c": fmt.Sprintf("%03d %s", i, strings.Repeat("é<", 248))})
		if r.err != nil || r.errors > 0 {
			t.Fatalf("createPost: %+v", r)
		}
	}
	return userID
}

// login logs the user of seedLongPosts in.
func login(t testing.TB, client *http.Client, url string) (token, userID string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": `mutation { login(input: {login: "attacked", password: "correct horse battery"}) { accessToken user { id } } }`})
	resp, err := client.Post(url+"/query", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Login struct {
				AccessToken string
				User        struct{ ID string }
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Data.Login.AccessToken == "" {
		t.Fatalf("login: %v %+v", err, out)
	}
	return out.Data.Login.AccessToken, out.Data.Login.User.ID
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
