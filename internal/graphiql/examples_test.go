package graphiql_test

import (
	"encoding/json"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/graphiql"
)

// TestExamplesValidate checks every example tab against the gateway's
// schema, so that a schema change cannot leave GraphiQL opening with
// queries that fail; their variables must be JSON objects.
func TestExamplesValidate(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}}).Schema()
	tabs := graphiql.Examples()
	kinds := map[string]bool{}
	for _, tab := range tabs {
		doc, errs := gqlparser.LoadQuery(schema, tab.Query)
		if len(errs) > 0 {
			t.Errorf("example %.60q does not validate: %v", tab.Query, errs)
			continue
		}
		if len(doc.Operations) != 1 {
			t.Errorf("example %.60q holds %d operations, want one (Run would ask which)", tab.Query, len(doc.Operations))
		}
		for _, op := range doc.Operations {
			kinds[string(op.Operation)] = true
		}
		if tab.Variables != "" {
			var v map[string]any
			if err := json.Unmarshal([]byte(tab.Variables), &v); err != nil {
				t.Errorf("example %.60q: variables %q: %v", tab.Query, tab.Variables, err)
			}
		}
	}
	for _, k := range []string{"query", "mutation", "subscription"} {
		if !kinds[k] {
			t.Errorf("no example %s", k)
		}
	}
}
