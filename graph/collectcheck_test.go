package graph

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Every test of this package that serves requests checks, after each
// response, that hand-written code handed gqlgen's field collection only
// selection sets that live as long as the operation (selection.go): every
// key of the operation's collection cache must point at a set of the
// document or at the Selections of a field gqlgen collected. A set built
// and dropped could be reused for another level's set, and that level
// answered with the wrong fields; this finds the dropped set every time,
// whether or not the collector happened to reuse its address.
func init() { afterResponse = checkCollectCache }

func checkCollectCache(ctx context.Context, resp *graphql.Response) {
	if resp == nil || !graphql.HasOperationContext(ctx) {
		return
	}
	oc := graphql.GetOperationContext(ctx)
	if bad := strayCollectKeys(oc); bad > 0 {
		resp.Errors = append(resp.Errors, &gqlerror.Error{
			Message: fmt.Sprintf("test check: %d selection sets given to graphql.CollectFields do not belong to the operation", bad),
		})
	}
}

// strayCollectKeys counts the keys of oc's collection cache that point at
// no set the operation keeps alive.
func strayCollectKeys(oc *graphql.OperationContext) int {
	live := map[uintptr]bool{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		if len(set) == 0 {
			return
		}
		live[reflect.ValueOf(set).Pointer()] = true
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			}
		}
	}
	if oc.Doc != nil {
		for _, op := range oc.Doc.Operations {
			walk(op.SelectionSet)
		}
		for _, f := range oc.Doc.Fragments {
			walk(f.SelectionSet)
		}
	}
	cache := reflect.ValueOf(oc).Elem().FieldByName("collectFieldsCache")
	items := cache.FieldByName("items")
	items = reflect.NewAt(items.Type(), unsafe.Pointer(items.UnsafeAddr())).Elem()
	iter := items.MapRange()
	for iter.Next() {
		fields := iter.Value().Interface().([]graphql.CollectedField)
		for _, f := range fields {
			if len(f.Selections) > 0 {
				live[reflect.ValueOf(f.Selections).Pointer()] = true
			}
		}
	}
	bad := 0
	for _, k := range items.MapKeys() {
		if p := uintptr(k.Field(0).Uint()); p != 0 && !live[p] {
			bad++
		}
	}
	return bad
}
