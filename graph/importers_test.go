package graph_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// schemaNames are what a package under internal/ may use of graph: the
// executable schema (to serve it, to check documents against it, or to
// derive the cost model from it). internal/gateway, which wires the
// gateway, may use anything.
var schemaNames = []string{"NewExecutableSchema", "Config", "Resolver", "NewExecution", "ExecOptions", "GuardModel"}

// TestImportedForSchemaOnly keeps graph the resolvers' package: what the
// edge and the operation rules share with execution (the error presenter,
// the stream markers, the media handler) lives in packages of its own, and
// nothing under internal/ but the wiring reaches into graph for anything
// other than the executable schema.
func TestImportedForSchemaOnly(t *testing.T) {
	uses, err := graphUses(filepath.Join("..", "internal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range uses {
		if !slices.Contains(schemaNames, u.name) {
			t.Errorf("%s uses graph.%s: only internal/gateway may use more of graph than the executable schema (%s)", u.pos, u.name, strings.Join(schemaNames, ", "))
		}
	}
}

// TestImportedForSchemaOnlyFails checks that the walk sees a use of graph.
func TestImportedForSchemaOnlyFails(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nimport g \"github.com/socialgw/gateway/graph\"\n\nvar _ = g.Present\nvar _ = g.NewExecutableSchema\n"
	if err := os.Mkdir(filepath.Join(dir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x", "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	uses, err := graphUses(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range uses {
		names = append(names, u.name)
	}
	if !slices.Equal(names, []string{"Present", "NewExecutableSchema"}) {
		t.Fatalf("uses = %v, want Present and NewExecutableSchema", names)
	}
}

// graphUse is one selector of the graph package in a file.
type graphUse struct {
	pos  token.Position
	name string
}

// graphUses lists the names of graph that the Go files under root use,
// tests included, outside internal/gateway (root's gateway directory).
func graphUses(root string) ([]graphUse, error) {
	const graphPath = "github.com/socialgw/gateway/graph"
	fset := token.NewFileSet()
	var out []graphUse
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || name == "node_modules" || p == filepath.Join(root, "gateway") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if ip, _ := strconv.Unquote(imp.Path.Value); ip == graphPath {
				name := path.Base(graphPath)
				if imp.Name != nil {
					name = imp.Name.Name
				}
				out = append(out, selectors(fset, f, name)...)
			}
		}
		return nil
	})
	return out, err
}

// selectors lists the uses of pkg.X in f.
func selectors(fset *token.FileSet, f *ast.File, pkg string) []graphUse {
	var out []graphUse
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkg {
				out = append(out, graphUse{fset.Position(sel.Pos()), sel.Sel.Name})
			}
		}
		return true
	})
	return out
}
