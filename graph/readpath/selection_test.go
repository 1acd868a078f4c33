package readpath_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneFieldCollector holds hand-written code to the one field collector
// (selection.go), which hands gqlgen only selection sets that outlive the
// operation: any other call could key gqlgen's per-operation cache with a
// set that is then freed, and another level be answered with its fields.
func TestOneFieldCollector(t *testing.T) {
	// This package, and graph's resolvers above it.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	resolvers, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, resolvers...) {
		if filepath.Base(f) == "generated.go" || f == "selection.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "graphql.CollectFields(") {
			t.Errorf("%s calls graphql.CollectFields: collect through selection.go", f)
		}
	}
}
