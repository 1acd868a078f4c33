package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redistest"
)

// needNode returns the path of node and npm, skipping the test when they
// are missing, unless REQUIRE_NODE=1 (CI) makes that a failure.
func needNode(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"node", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("REQUIRE_NODE") == "1" {
				t.Fatalf("%s is required (REQUIRE_NODE=1): %v", bin, err)
			}
			t.Skipf("%s is not installed", bin)
		}
	}
}

// npmCI installs dir's locked packages when node_modules is missing.
func npmCI(t *testing.T, dir string) {
	t.Helper()
	redistest.Slow(t, "installs npm packages and runs node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}

// TestGraphQLOverHTTPAudit runs graphql-http's serverAudits (every MUST,
// SHOULD and MAY of the GraphQL-over-HTTP specification it checks)
// against the gateway and requires all of them to pass.
func TestGraphQLOverHTTPAudit(t *testing.T) {
	needNode(t)
	dir := filepath.Join("testdata", "httpaudit")
	npmCI(t, dir)
	g := launch(t, redistest.WithEnv(t, map[string]string{"JWT_SECRET": testSecret}))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "audit.mjs", g.url+"/query")
	cmd.Dir = dir
	// node's warnings are shown with a failure only.
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node audit.mjs: %v\n%s\n%s", err, out, &stderr)
	}
	if stderr.Len() > 0 {
		t.Logf("node audit.mjs stderr:\n%s", &stderr)
	}
	var results []struct{ ID, Name, Status, Reason string }
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("audit output: %v\n%s", err, out)
	}
	// graphql-http 1.23.1 has 61 audits; fewer would mean the script
	// stopped early.
	if len(results) < 61 {
		t.Errorf("%d audits ran, want 61", len(results))
	}
	for _, r := range results {
		if r.Status != "ok" {
			t.Errorf("%s %s (%s): %s", r.ID, r.Name, r.Status, r.Reason)
		}
	}
}
