package operation

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/gqlguard"
)

func testRules(t *testing.T) *Rules {
	t.Helper()
	return New(graph.NewExecution(&graph.Resolver{}, nil, graph.ExecOptions{}).Schema, Options{Limits: gqlguard.DefaultLimits(20000)})
}

// The guard's report travels with the operation: the gate reads it rather
// than measuring the document again; an edge verdict for the same
// document is used as it is.
func TestDocumentLimitsKeepsTheReport(t *testing.T) {
	r := testRules(t)
	ext := documentLimits{r.guard}
	doc := `{ a: userTimeline(userId: "1", first: 100) { edges { node { id content } } } }`
	oc := &graphql.OperationContext{}
	ctx := graphql.WithOperationContext(context.Background(), oc)
	if err := ext.MutateOperationParameters(ctx, &graphql.RawParams{Query: doc}); err != nil {
		t.Fatal(err)
	}
	report, ok := reportOf(oc)
	if !ok || report.ResponseBytes == 0 || report.Fields == 0 {
		t.Fatalf("report %+v, %v: not kept with the operation", report, ok)
	}
	// A verdict the edge made for this document is taken as it is.
	edge := &Verdict{Query: doc, Err: nil}
	edge.Report.Fields = 12345
	oc = &graphql.OperationContext{}
	ctx = WithVerdict(graphql.WithOperationContext(context.Background(), oc), edge)
	if err := ext.MutateOperationParameters(ctx, &graphql.RawParams{Query: doc}); err != nil {
		t.Fatal(err)
	}
	if report, _ := reportOf(oc); report.Fields != 12345 {
		t.Errorf("measured again: %+v", report)
	}
	// A refused document keeps no report, and is refused.
	oc = &graphql.OperationContext{}
	ctx = graphql.WithOperationContext(context.Background(), oc)
	if err := ext.MutateOperationParameters(ctx, &graphql.RawParams{Query: "{ " + longSelection(400) + " }"}); err == nil {
		t.Error("a document of 400 fields passed")
	}
	if _, ok := reportOf(oc); ok {
		t.Error("a refused document left a report")
	}
}

func longSelection(n int) string {
	b := make([]byte, 0, n*12)
	for i := range n {
		b = append(b, []byte("a"+string(rune('0'+i%10))+": __typename ")...)
	}
	return string(b)
}

// A persisted query the edge looked up, found or not, is answered from the
// context: the cache is read once a request.
func TestPersistedLookedUpOnce(t *testing.T) {
	r := testRules(t)
	ctx := context.Background()
	r.apq.Add(ctx, "h1", "{ __typename }")
	ctx1, doc := r.Persisted(ctx, "h1")
	if doc != "{ __typename }" {
		t.Fatalf("found %q", doc)
	}
	ctx2, doc := r.Persisted(ctx, "h2")
	if doc != "" {
		t.Fatalf("found %q for an unknown hash", doc)
	}
	// Registered meanwhile (another request): this request keeps what it
	// looked up.
	r.apq.Add(ctx, "h2", "{ me { id } }")
	m := memoAPQ{r.apq}
	if got, ok := m.Get(ctx1, "h1"); !ok || got != "{ __typename }" {
		t.Errorf("h1: %q %v", got, ok)
	}
	if got, ok := m.Get(ctx2, "h2"); ok {
		t.Errorf("h2 was looked up as unknown, then found %q", got)
	}
	if _, ok := m.Get(ctx, "h2"); !ok {
		t.Error("without a lookup the cache is read")
	}
}
