package redisstore

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// pageFiles hold one kind of page each: its entry point and its rounds.
var pageFiles = []string{"timeline_home.go", "timeline_newer.go", "timeline_user.go", "timeline_tag.go", "lists.go"}

// sharedReadFiles are the pieces the page files share; they call no page
// file, so that a page's read goes down from its file and back, never up
// into another page's.
var sharedReadFiles = []string{"timeline.go", "timeline_homelist.go", "timeline_fetch.go", "post_read.go", "postcache.go", "rows.go", "timeline_fold.go"}

// TestSharedReadPiecesDoNotCallUp fails when a shared piece of the read
// path names a function or type that a page file declares.
func TestSharedReadPiecesDoNotCallUp(t *testing.T) {
	fset := token.NewFileSet()
	declared := map[string]string{} // top-level name → page file
	for _, name := range pageFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for decl := range topLevel(f) {
			declared[decl] = name
		}
	}
	for _, name := range sharedReadFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range usedNames(f) {
			if page, ok := declared[id.Name]; ok {
				t.Errorf("%s: %s names %s of %s: a shared piece calls no page file", fset.Position(id.Pos()), name, id.Name, page)
			}
		}
	}
}

// TestSharedReadPiecesCheckFails: the check catches a shared file that
// names a page file's function.
func TestSharedReadPiecesCheckFails(t *testing.T) {
	fset := token.NewFileSet()
	page, err := parser.ParseFile(fset, "page.go", "package p\nfunc readPage() {}\ntype pageState struct{}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := parser.ParseFile(fset, "shared.go", "package p\nfunc helper() { readPage() }\nfunc other(*pageState) {}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	decl := topLevel(page)
	var named []string
	for _, id := range usedNames(shared) {
		if decl[id.Name] {
			named = append(named, id.Name)
		}
	}
	if !slices.Equal(named, []string{"readPage", "pageState"}) {
		t.Errorf("caught %v, want readPage and pageState", named)
	}
}

// topLevel are the functions (not methods) and types f declares.
func topLevel(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				out[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					out[ts.Name.Name] = true
				}
			}
		}
	}
	return out
}

// usedNames are the identifiers f's declarations use (not those they
// declare), in order.
func usedNames(f *ast.File) []*ast.Ident {
	var out []*ast.Ident
	for _, d := range f.Decls {
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				// The receiver's and the name's identifiers are declared
				// here; the body and the signature's types are uses.
				if n.Recv != nil {
					ast.Inspect(n.Recv, func(m ast.Node) bool { return collect(m, &out) })
				}
				ast.Inspect(n.Type, func(m ast.Node) bool { return collect(m, &out) })
				if n.Body != nil {
					ast.Inspect(n.Body, func(m ast.Node) bool { return collect(m, &out) })
				}
				return false
			case *ast.TypeSpec:
				ast.Inspect(n.Type, func(m ast.Node) bool { return collect(m, &out) })
				return false
			}
			return collect(n, &out)
		})
	}
	return out
}

// collect adds n to out when it is an identifier; x.Name names a field or
// a method, not a top-level name, so only x is looked into.
func collect(n ast.Node, out *[]*ast.Ident) bool {
	switch n := n.(type) {
	case *ast.SelectorExpr:
		ast.Inspect(n.X, func(m ast.Node) bool { return collect(m, out) })
		return false
	case *ast.Ident:
		*out = append(*out, n)
	}
	return true
}
