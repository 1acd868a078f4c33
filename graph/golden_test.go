package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/redisstore"
)

var update = flag.Bool("update", false, "rewrite the golden responses under testdata/golden")

// TestGolden runs the documents of testdata/golden in name order against
// one small network (alice, bob and carol, ids 1 to 3; bob follows alice)
// and compares each response with NAME.json beside it. A header of
// comment lines says who sends the document ("# as: alice"; "# as:" is
// anonymous) and its variables ("# vars: {...}"). Values that change from
// run to run (times, tokens) are replaced by placeholders. After each
// document the fan-out queue is drained, so the next one sees its effects.
//
// go test ./graph -run TestGolden -update rewrites the .json files; review
// the diff before committing it.
func TestGolden(t *testing.T) {
	// Alice moderates (98_reports).
	s := newFeedServerWith(t, gatewaytest.Options{Moderation: &gateway.ModerationConfig{Moderators: []string{"alice_1"}}}, redisstore.Push)
	users := map[string]string{}
	for _, name := range []string{"alice", "bob", "carol"} {
		users[name] = s.Register(t, name).Token
	}
	if err := s.Store.Follow(context.Background(), "2", "1"); err != nil {
		t.Fatal(err)
	}
	// Carol has pictures (set through the store: these gateways store no
	// files); 90_profile names them.
	giveProfiles(t, s.Server, "3")
	// Queries are also run through gqlgen's generated execution alone and
	// with loader batches split key by key: the same answer every way.
	others := map[string]string{
		"generic execution": gatewaytest.Serve(t, variantHandler(s.Server, graph.GenericOnly, gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(100000)})),
		"split batches": gatewaytest.Serve(t, s.NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(100000),
			Loaders: loader.Config{Wait: time.Nanosecond, BatchCapacity: 1}})),
	}
	files, err := filepath.Glob("testdata/golden/*.graphql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden documents: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".graphql")
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		as, vars := goldenHeader(t, string(src))
		token, ok := users[as]
		if as != "" && !ok {
			t.Fatalf("%s: unknown user %q", name, as)
		}
		_, body := gatewaytest.PostRaw(t, s.URL, token, string(src), vars)
		s.drain(t)
		got := normalizeGolden(t, body)
		if onlyQueries(string(src)) {
			for way, url := range others {
				_, b := gatewaytest.PostRaw(t, url, token, string(src), vars)
				if other := normalizeGolden(t, b); !bytes.Equal(other, got) && !sameErrors(other, got) {
					t.Errorf("%s: %s answers differently (-served +%s):\n%s", name, way, way, lineDiff(string(got), string(other)))
				}
			}
		}
		want, err := os.ReadFile(strings.TrimSuffix(file, ".graphql") + ".json")
		if *update {
			if err := os.WriteFile(strings.TrimSuffix(file, ".graphql")+".json", got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v (run with -update to create it)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: response differs from %s.json (-want +got):\n%s", name, name, lineDiff(string(want), string(got)))
		}
	}
}

// onlyQueries reports whether a document parses and holds only queries.
func onlyQueries(src string) bool {
	doc, err := parser.ParseQuery(&ast.Source{Input: src})
	if err != nil {
		return false
	}
	for _, op := range doc.Operations {
		if op.Operation != ast.Query {
			return false
		}
	}
	return len(doc.Operations) > 0
}

// goldenHeader reads the "# as:" and "# vars:" lines of a document.
func goldenHeader(t *testing.T, src string) (as string, vars map[string]any) {
	t.Helper()
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		if v, ok := strings.CutPrefix(line, "# as:"); ok {
			as = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "# vars:"); ok {
			if err := json.Unmarshal([]byte(v), &vars); err != nil {
				t.Fatalf("vars %q: %v", v, err)
			}
		}
	}
	return as, vars
}

// volatile are the fields whose values change from run to run.
var volatile = map[string]bool{"createdAt": true, "expiresAt": true, "accessToken": true, "refreshToken": true, "editedAt": true, "replacedAt": true}

// normalizeGolden replaces volatile values, sorts the errors and indents
// the response.
func normalizeGolden(t *testing.T, body []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, body)
	}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				if volatile[k] && e != nil {
					x[k] = "<" + k + ">"
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	// Root fields of a query run concurrently, so their errors arrive in
	// any order: compare them sorted.
	if m, ok := v.(map[string]any); ok {
		if errs, ok := m["errors"].([]any); ok {
			slices.SortFunc(errs, func(a, b any) int {
				x, _ := json.Marshal(a)
				y, _ := json.Marshal(b)
				return bytes.Compare(x, y)
			})
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// lineDiff shows the lines of want and got that differ, in order, as a
// minimal line diff (longest common subsequence).
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + b[j] + "\n")
			j++
		default:
			out.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return out.String()
}
