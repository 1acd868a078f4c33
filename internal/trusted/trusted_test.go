package trusted_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/trusted"
)

const (
	home = "query Home($first: Int!) { timeline(first: $first) { edges { node { ...F } } } }\nfragment F on Post { id content }"
	like = "mutation Like($id: ID!) { likePost(postId: $id) { id } }"
)

func apollo(docs ...string) []byte {
	m := trusted.Manifest{Format: "apollo-persisted-query-manifest", Version: 1}
	for _, d := range docs {
		m.Operations = append(m.Operations, trusted.Operation{ID: trusted.Hash(d), Body: d})
	}
	b, _ := json.Marshal(m)
	return b
}

func TestParse(t *testing.T) {
	plain, _ := json.Marshal(map[string]string{strings.ToUpper(trusted.Hash(like)): like})
	tests := []struct {
		name     string
		manifest []byte
		want     string // in the error; "" for success
		n        int
	}{
		{"apollo", apollo(home, like), "", 2},
		{"hash to document, upper-case hash", plain, "", 1},
		{"wrong hash", []byte(`{"` + trusted.Hash(home) + `": "` + "{ me { id } }" + `"}`), "SHA-256", 0},
		{"other format", []byte(`{"format": "relay", "version": 1, "operations": []}`), "format", 0},
		{"empty", []byte(`{}`), "no document", 0},
		{"not JSON", []byte(`[1, 2]`), "manifest", 0},
		{"does not parse", apollo("query {"), "document", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := trusted.Parse(tt.manifest)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Parse = %v, want an error about %q", err, tt.want)
				}
				return
			}
			if err != nil || d.Len() != tt.n {
				t.Fatalf("Parse = %v, %v; want %d documents", d, err, tt.n)
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	d, err := trusted.Parse(apollo(home, like))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		doc  string
		want bool
	}{
		{"exact", home, true},
		{"other spacing and a comment", "# the likes\nmutation Like( $id : ID! ){likePost(postId:$id){id}}", true},
		{"fragment first", "fragment F on Post { id content } query Home($first: Int!) { timeline(first: $first) { edges { node { ...F } } } }", true},
		{"one more field", "mutation Like($id: ID!) { likePost(postId: $id) { id likesCount } }", false},
		{"another name", "mutation Other($id: ID!) { likePost(postId: $id) { id } }", false},
		{"an added operation", like + " query Me { me { id } }", false},
		{"does not parse", "mutation Like(", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 2 { // the second time from the cache of variants
				if got := d.Allowed(tt.doc, 100); got != tt.want {
					t.Fatalf("Allowed = %v, want %v", got, tt.want)
				}
			}
		})
	}
	if d.Allowed(strings.Repeat(" ", 10)+"mutation Like($id: ID!) { likePost(postId: $id) { id } }", 5) {
		t.Errorf("a variant past the token bound was parsed and allowed")
	}
	if doc, ok := d.Get(t.Context(), strings.ToUpper(trusted.Hash(like))); !ok || doc != like {
		t.Errorf("Get by hash = %q, %v", doc, ok)
	}
}

func TestExtract(t *testing.T) {
	sources := map[string]string{
		"a.js": "// query Commented { me { id } }\n" +
			"const FIELDS = gql`\n  fragment F on Post { id }`;\n" +
			"const SEL = 'id name';\n" +
			"const HOME = gql`\n  query Home { timeline { edges { node { ...F } } } }\n  ${FIELDS}`;\n" +
			"client.query(HOME); const msg = \"query failed\";\n",
		"b.js": "const LIVE = print(gql`subscription Live { timelineUpdated { ...F } } ${FIELDS}`);\n" +
			"post(`mutation Login($l: String!) { login(input: {login: $l, password: \"x\"}) { user { ${SEL} } } }`);\n" +
			"post('mutation { logout }');\n",
	}
	m, err := trusted.Extract(sources)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range m.Operations {
		got = append(got, op.Type+" "+op.Name)
		if op.ID != trusted.Hash(op.Body) {
			t.Errorf("%s: id is not the body's hash", op.Name)
		}
	}
	slices.Sort(got)
	if want := "mutation |mutation Login|query Home|subscription Live"; strings.Join(got, "|") != want {
		t.Fatalf("operations %q, want %q", got, want)
	}
	if _, err := trusted.Extract(map[string]string{"c.js": "const Q = gql`query Q { ...${MISSING} }`;"}); err == nil || !strings.Contains(err.Error(), "MISSING") {
		t.Errorf("an unknown interpolation: %v", err)
	}
}

// TestAllowedVariantsMemory: a listed document padded with a comment is
// a variant the gateway allows, and comments are no tokens, so every
// variant can be as large as a body. What the list remembers of the
// variants it has seen must not grow with their size: 200 variants of
// 256 KiB would otherwise hold 50 MiB for the life of the process.
func TestAllowedVariantsMemory(t *testing.T) {
	d, err := trusted.Parse(apollo(like))
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 256<<10)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := range 200 {
		if !d.Allowed(fmt.Sprintf("# %d %s\n%s", i, pad, like), 100) {
			t.Fatal("a padded variant of a listed document was refused")
		}
	}
	if grew := int64(heap()) - int64(before); grew > 4<<20 {
		t.Errorf("remembering 200 variants of 256 KiB grew the heap by %d MiB", grew>>20)
	}
	runtime.KeepAlive(d)
}
