// Package codesize holds one test: the size limits of hand-written Go
// code in the module, so that a file or a function that outgrows them
// is split when it is written rather than in a later clean-up.
package codesize

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The limits, for non-test code that no tool generated (a file whose
// header says "Code generated … DO NOT EDIT", per go.dev/s/generatedcode).
// gqlgen's resolver files (*.resolvers.go), which it only partly
// generates, hold one method per schema field with its layout fixed by
// gqlgen, so their length follows the schema: instead of a file limit,
// each resolver there is thin, a call into a helper or a domain package.
const (
	maxFileLines     = 500
	maxFuncLines     = 80
	maxResolverLines = 8
)

func TestCodeSize(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		resolvers := strings.HasSuffix(path, ".resolvers.go")
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines && !resolvers {
			t.Errorf("%s: %d lines, more than %d: split it by what its parts hold", rel, n, maxFileLines)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if n > maxFuncLines {
				t.Errorf("%s: func %s: %d lines, more than %d", rel, fn.Name.Name, n, maxFuncLines)
			}
			if resolvers && n > maxResolverLines {
				t.Errorf("%s: resolver %s: %d lines, more than %d: move its body to a helper", rel, fn.Name.Name, n, maxResolverLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
