package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/demo"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
)

// emptyDB empties database n of the package's Redis server and returns
// the REDIS_URL and REDIS_CLUSTER of it. On the cluster pass, which has no
// numbered databases, it empties the whole package cluster: the tests of
// this package do not run in parallel. Tests that use a database of their
// own must not run in parallel with others using the same n.
func emptyDB(t *testing.T, n int) map[string]string {
	t.Helper()
	ctx := context.Background()
	if redistest.Cluster(t) != nil {
		if err := redisstore.EachServer(ctx, redistest.Client(t), func(ctx context.Context, m redis.UniversalClient) error {
			return m.FlushAll(ctx).Err()
		}); err != nil {
			t.Fatal(err)
		}
		return redistest.Env(t)
	}
	u := fmt.Sprintf("%s/%d", redistest.URL(t), n)
	opts, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"REDIS_URL": u, "REDIS_CLUSTER": "false"}
}

var headersRE = regexp.MustCompile(`(?m)^  (alice|bob) +(\{"Authorization": "Bearer [^"]+"\})$`)

// TestDemo starts the gateway with --demo on an empty database: the log
// carries a Headers line per demo user that works as it is; a second
// gateway with --demo on the now non-empty database refuses to start.
func TestDemo(t *testing.T) {
	db := emptyDB(t, 10)
	db["JWT_SECRET"] = testSecret
	g := launch(t, db, "--demo")
	log := g.out.String()
	lines := headersRE.FindAllStringSubmatch(log, -1)
	if len(lines) != 2 {
		t.Fatalf("want a Headers line for alice and bob in the log:\n%s", log)
	}
	for _, m := range lines {
		var headers map[string]string
		if err := json.Unmarshal([]byte(m[2]), &headers); err != nil {
			t.Fatalf("%s's Headers line %q is not JSON: %v", m[1], m[2], err)
		}
		token := strings.TrimPrefix(headers["Authorization"], "Bearer ")
		r := g.query(t, token, `{ me { name } timeline(first: 20) { edges { node { author { name } } } } }`, nil)
		if r.Code() != "" || r.Str("me.name") != m[1] {
			t.Fatalf("%s's token: %+v", m[1], r)
		}
		if n := len(r.Get("timeline.edges").([]any)); n != 20 {
			t.Errorf("%s's home timeline has %d posts on its first page, want 20", m[1], n)
		}
	}
	if !strings.Contains(log, "celebrity_threshold=75") {
		t.Errorf("log does not show the demo's celebrity threshold:\n%s", log)
	}

	err := run(context.Background(), []string{"--listen=127.0.0.1:0", "--demo"},
		mapEnv(db), &syncBuffer{},
		func(string) { t.Error("the second demo gateway served") })
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("second --demo on the same database: %v, want a refusal", err)
	}
}

// TestSPADir serves a directory at /app/.
func TestSPADir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!DOCTYPE html><title>app</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := launch(t, redistest.WithEnv(t, map[string]string{"REDIS_PREFIX": redistest.Prefix(t), "SPA_DIR": dir}))
	status, h, body := g.get(t, "/app/")
	if status != 200 || !strings.Contains(body, "<title>app</title>") || h.Get("Cache-Control") != "no-cache" {
		t.Errorf("GET /app/ = %d %q, Cache-Control %q", status, body, h.Get("Cache-Control"))
	}
	for _, p := range []string{"/app/nope.js", "/app/../main.go", "/app/" + url.PathEscape("../main.go")} {
		if status, _, _ := g.get(t, p); status != 404 {
			t.Errorf("GET %s = %d, want 404", p, status)
		}
	}
}

// postAs publishes a post as the holder of token.
func postAs(t *testing.T, baseURL, token, content string) *gatewaytest.Response {
	t.Helper()
	return gatewaytest.Post(t, baseURL, token, `mutation($c: String!) { createPost(input: {content: $c}) { id } }`,
		map[string]any{"c": content})
}

// TestRestartAdoptsThreshold: a gateway started without
// CELEBRITY_THRESHOLD on a Redis whose deployment recorded another (the
// demo's 75) adopts it and says so; an explicit disagreement is refused.
func TestRestartAdoptsThreshold(t *testing.T) {
	env := emptyDB(t, 13)
	env["JWT_SECRET"] = testSecret
	first := maps.Clone(env)
	first["CELEBRITY_THRESHOLD"] = strconv.Itoa(demo.DefaultCelebrityThreshold)
	if err := launch(t, first).stop(t); err != nil {
		t.Fatal(err)
	}
	g := launch(t, env)
	if log := g.out.String(); !strings.Contains(log, "adopting the deployment's recorded value") ||
		!strings.Contains(log, "celebrity_threshold="+strconv.Itoa(demo.DefaultCelebrityThreshold)) {
		t.Errorf("no word of the adopted threshold:\n%s", log)
	}
	if err := g.stop(t); err != nil {
		t.Fatal(err)
	}
	env["CELEBRITY_THRESHOLD"] = "500"
	err := run(context.Background(), []string{"--listen=127.0.0.1:0"}, mapEnv(env), io.Discard, func(string) { t.Error("served") })
	if err == nil || !strings.Contains(err.Error(), "CELEBRITY_THRESHOLD is 75 in this deployment, 500 here") {
		t.Errorf("run = %v, want the explicit threshold refused", err)
	}
}
