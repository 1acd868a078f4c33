package main

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/trusted"
)

const (
	appSources  = "../../examples/spa/src"
	appManifest = "../../examples/spa/trusted-documents.json"
)

// TestAppManifestCurrent: the committed manifest of the reference app is
// what this tool makes of the app's sources today (after changing an
// operation: cd examples/spa && npm run trusted-documents).
func TestAppManifestCurrent(t *testing.T) {
	want, err := manifest(appSources)
	if err != nil {
		t.Fatal(err)
	}
	var got trusted.Manifest
	b, err := os.ReadFile(appManifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, want) {
		t.Fatalf("%s is stale: run `npm run trusted-documents` in examples/spa", appManifest)
	}
}

// TestAppOperationsListed: every operation the app's sources name (read
// here with a plain pattern, not the tool's scanner) is in the manifest,
// and every listed document is valid against the schema and passes the
// gateway's default limits (cost, depth, size) with the variables the
// guard assumes when none are given: an app whose view asks for more
// than the gateway allows would only fail in a browser.
func TestAppOperationsListed(t *testing.T) {
	docs, err := trusted.Load(appManifest)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(appManifest)
	var m trusted.Manifest
	_ = json.Unmarshal(b, &m)
	listed := map[string]bool{}
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	guard := gqlguard.New(gqlguard.DefaultLimits(gqlguard.DefaultCost), graph.GuardModel(schema))
	for _, op := range m.Operations {
		if _, err := guard.Check(op.Body, op.Name, nil); err != nil {
			t.Errorf("%s %s is refused by the default limits: %v", op.Type, op.Name, err)
		}
		listed[op.Type+" "+op.Name] = true
		q, err := parser.ParseQuery(&ast.Source{Input: op.Body})
		if err != nil {
			t.Fatalf("%s: %v", op.Name, err)
		}
		if errs := validator.Validate(schema, q); len(errs) > 0 {
			t.Errorf("%s %s is not valid against the schema: %v", op.Type, op.Name, errs)
		}
	}
	files, _ := os.ReadDir(appSources)
	named := regexp.MustCompile("[`'\"]\\s*(query|mutation|subscription)\\b\\s*([A-Za-z_]\\w*)?\\s*[({]")
	found := 0
	for _, f := range files {
		src, err := os.ReadFile(appSources + "/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(src), -1) {
			found++
			if !listed[m[1]+" "+m[2]] {
				t.Errorf("%s: %s %s is not in the manifest", f.Name(), m[1], m[2])
			}
		}
	}
	if found == 0 || docs.Len() != len(m.Operations) {
		t.Fatalf("%d operations found in the sources, %d listed", found, docs.Len())
	}
}
