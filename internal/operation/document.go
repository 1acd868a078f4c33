package operation

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/gqlguard"
)

// Verdict is the guard's verdict on a document. The HTTP edge measures a
// request's document once, before it reads the token or takes a slot,
// and passes the verdict in the context so that it is not measured again.
type Verdict struct {
	Query, OperationName string
	Report               gqlguard.Report
	Err                  *gqlerror.Error
}

type verdictKey struct{}

// Check measures a document with the guard.
func (r *Rules) Check(query, operationName string, variables map[string]any) *Verdict {
	v := &Verdict{Query: query, OperationName: operationName}
	v.Report, v.Err = r.guard.Check(query, operationName, variables)
	return v
}

// WithVerdict returns ctx carrying v.
func WithVerdict(ctx context.Context, v *Verdict) context.Context {
	return context.WithValue(ctx, verdictKey{}, v)
}

// VerdictFrom returns the verdict ctx carries, or nil.
func VerdictFrom(ctx context.Context) *Verdict {
	v, _ := ctx.Value(verdictKey{}).(*Verdict)
	return v
}

// documentLimits runs the guard in gqlgen, before parsing and validation,
// on every transport (websocket operations included), after the persisted
// query extension has filled the query in. The report is kept with the
// operation (reportOf) for the gate.
type documentLimits struct{ guard *gqlguard.Guard }

var (
	_ graphql.HandlerExtension          = documentLimits{}
	_ graphql.OperationParameterMutator = documentLimits{}
)

const documentLimitsName = "DocumentLimits"

func (documentLimits) ExtensionName() string                   { return documentLimitsName }
func (documentLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (e documentLimits) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	v := VerdictFrom(ctx)
	if v == nil || v.Query != p.Query || v.OperationName != p.OperationName {
		v = &Verdict{Query: p.Query, OperationName: p.OperationName}
		v.Report, v.Err = e.guard.Check(p.Query, p.OperationName, p.Variables)
	}
	// gqlgen puts the operation's context in ctx before it calls the
	// parameter mutators.
	if v.Err == nil && graphql.HasOperationContext(ctx) {
		graphql.GetOperationContext(ctx).Stats.SetExtension(documentLimitsName, v.Report)
	}
	return v.Err
}

// reportOf is the guard's report on an operation's document.
func reportOf(oc *graphql.OperationContext) (gqlguard.Report, bool) {
	r, ok := oc.Stats.GetExtension(documentLimitsName).(gqlguard.Report)
	return r, ok
}
