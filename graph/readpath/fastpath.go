package readpath

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// FastPath is the timeline fast path: see Serve.
type FastPath struct {
	// Pages fetches the pages it renders.
	Pages Pages
	// Stats counts what it served and declined.
	Stats *FastStats
	// Pictures addresses profile pictures.
	Pictures PictureURLs
}

// Pages fetches timeline pages with what a query asks of their posts, in
// a fixed number of round trips (the store's timeline service).
type Pages interface {
	HomePage(ctx context.Context, viewerID string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error)
	UserPage(ctx context.Context, viewerID, userID string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error)
}

// The timeline fast path.
//
// Executing a 20-post page through gqlgen's generated code costs about a
// millisecond and a half of CPU and 14 000 allocations from memory, most
// of it per-field contexts, a goroutine per resolver field and their stack
// growth: more than Redis spends serving the page (docs/performance.md).
// For the root fields timeline and userTimeline, whose data a single page
// fetch brings complete, this middleware writes the JSON of the field
// straight from the fetched page instead.
//
// It takes over only when every field selected under the root field is
// one it renders (the Timeline, Post, User-profile and Comment fields a
// feed shows: those whose rule in fields.go has a render) and the page
// holds everything they need;
// anything else — a field it does not know, a @defer, bad arguments, a
// Redis error, an author that vanished — goes down the ordinary path, which
// then produces the same answer or the same error it always would. Field
// order, aliases, fragments, @skip/@include and __typename follow gqlgen's
// own field collection; scalars are written by the same marshalers the
// generated code uses. TestFastPathMatchesGeneric (graph) runs a corpus
// of documents both ways and requires byte-identical responses.
//
// Serve is the middleware: install it with the server's AroundRootFields.
func (r *FastPath) Serve(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	rf := graphql.GetRootFieldContext(ctx)
	if rf == nil || fastRoots[rf.Field.Name] == nil {
		return next(ctx)
	}
	out, reason, ok := r.renderFast(ctx, rf.Field)
	if !ok {
		r.Stats.fallbacks[reason].Add(1)
		return next(ctx)
	}
	r.Stats.served.Add(1)
	return out
}

// renderFast renders a timeline root field, or says why it declines.
func (r *FastPath) renderFast(ctx context.Context, field graphql.CollectedField) (graphql.Marshaler, FallbackReason, bool) {
	oc := graphql.GetOperationContext(ctx)
	if reason, ok := fastDocument(oc, field); !ok {
		return nil, reason, false
	}
	page, handOff, reason, ok := r.fastFetch(ctx, oc, field)
	if !ok {
		return nil, reason, false
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	fr := fastRenderer{oc: oc, page: page, l: loader.For(ctx), buf: buf, pictures: r.Pictures}
	if !fr.timeline(field.Selections) {
		bufPool.Put(buf)
		// The page lacks something the renderer needs (an author that
		// vanished, say): the ordinary path renders it from the same page,
		// without fetching it again.
		handOff()
		return nil, FallbackIncompletePage, false
	}
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(buf.Bytes())
		bufPool.Put(buf)
	}), 0, true
}

// fastDocument decides everything the fast path declines for the document
// alone, before any fetch.
func fastDocument(oc *graphql.OperationContext, field graphql.CollectedField) (FallbackReason, bool) {
	if oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return FallbackOperation, false
	}
	if reason, ok := fastField(field, fastRoots[field.Name]); !ok {
		return reason, false
	}
	return fastSupported(oc, field.Selections, "Timeline", false)
}

// fastFetch fetches the page a timeline root field asks for, with what
// its selection needs, and returns with it how to hand it to the ordinary
// path; false, with the reason, when the arguments or the fetch fail.
func (r *FastPath) fastFetch(ctx context.Context, oc *graphql.OperationContext, field graphql.CollectedField) (*readplan.Page, func(), FallbackReason, bool) {
	args := field.ArgumentMap(oc.Variables)
	first, ok := optionalInt(args["first"])
	after, ok1 := stringArg(args["after"])
	before, ok2 := stringArg(args["before"])
	if !ok || !ok1 || !ok2 {
		return nil, nil, FallbackBadArguments, false
	}
	p, err := social.NewTwoWayRequest(first, &after, &before)
	if err != nil {
		return nil, nil, FallbackBadArguments, false
	}
	viewer := social.ViewerID(ctx)
	w := timelineWants(oc, fieldSel(field))
	l := loader.For(ctx)
	if field.Name == "timeline" {
		if viewer == "" {
			return nil, nil, FallbackAnonymous, false
		}
		page, err := r.Pages.HomePage(ctx, viewer, p, w)
		if err != nil {
			return nil, nil, FallbackFetchError, false
		}
		return page, func() { l.PrimeHomePage(p, w, page) }, 0, true
	}
	userID, err := graphql.UnmarshalID(args["userId"]) // IDs may arrive as numbers
	if err != nil {
		return nil, nil, FallbackBadArguments, false
	}
	// Fetched directly, not through the loader: the fast path has no other
	// page to batch with and would only wait out its window.
	page, err := r.Pages.UserPage(ctx, viewer, userID, p, w)
	if err != nil {
		return nil, nil, FallbackFetchError, false
	}
	return page, func() { l.PrimeUserPage(readplan.UserPageKey{User: userID, Page: p, Wants: w}, page) }, 0, true
}

// FallbackReason is why the fast path handed a root field to the ordinary
// path.
type FallbackReason int

// The reasons, as the metric gateway_fastpath_fallbacks_total labels them
// (FallbackReasons).
const (
	FallbackOperation      FallbackReason = iota // not a query
	FallbackField                                // a field the renderer does not know
	FallbackArgument                             // a field argument it does not read
	FallbackDirective                            // a directive other than @skip and @include
	FallbackDeferred                             // @defer
	FallbackBadArguments                         // arguments the resolver will refuse
	FallbackAnonymous                            // a home timeline without a viewer
	FallbackFetchError                           // the page fetch failed
	FallbackIncompletePage                       // the page lacks something (handed over, not fetched again)
	numFallbackReasons
)

// FallbackReasons are the reasons' metric labels, index by reason.
var FallbackReasons = [numFallbackReasons]string{
	"operation", "field", "argument", "directive", "deferred", "bad_arguments", "anonymous", "fetch_error", "incomplete_page",
}

// FastStats counts the timeline root fields the fast path rendered and
// those it handed to the ordinary path, by reason: an operator sees when a
// schema or client change sent every page down the slower path.
type FastStats struct {
	served    atomic.Int64
	fallbacks [numFallbackReasons]atomic.Int64
}

// NewFastStats returns zeroed counters.
func NewFastStats() *FastStats { return &FastStats{} }

// Served is the number of root fields the fast path rendered.
func (s *FastStats) Served() int64 { return s.served.Load() }

// Fallbacks is the number of root fields handed to the ordinary path for
// reason.
func (s *FastStats) Fallbacks(reason FallbackReason) int64 { return s.fallbacks[reason].Load() }

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func optionalInt(v any) (*int, bool) {
	if v == nil {
		return nil, true
	}
	n, err := graphql.UnmarshalInt(v)
	return &n, err == nil
}

// fastSupported reports whether every field of sel (of type typ; below
// repostOf when original) is one the fast path renders, with arguments and
// directives it understands; when not, why.
func fastSupported(oc *graphql.OperationContext, sel ast.SelectionSet, typ string, original bool) (FallbackReason, bool) {
	for _, f := range collect(oc, sel, typ) {
		args, ok := fastRule(typ, f, original)
		if !ok {
			return FallbackField, false
		}
		if reason, ok := fastField(f, args); !ok {
			return reason, false
		}
		if len(f.Selections) > 0 {
			if reason, ok := fastSupported(oc, f.Selections, valueType(f), ruleOf(typ, f).original); !ok {
				return reason, false
			}
		}
	}
	return 0, true
}

// fastRule reports whether the fast path renders field f of typ (below
// repostOf when original), and which arguments it reads.
func fastRule(typ string, f graphql.CollectedField, original bool) ([]string, bool) {
	if f.Name == "__typename" {
		return nil, true
	}
	if names, ok := connectionFields[typ]; ok {
		return nil, slices.Contains(names, f.Name)
	}
	r, ok := fieldRules[typ][f.Name]
	return r.args, ok && r.render != nil && !(original && r.topOnly)
}

// fastField checks one field's directives (in the document and in the
// schema) and the arguments its definition declares against args, those
// the fast path reads.
func fastField(f graphql.CollectedField, args []string) (FallbackReason, bool) {
	if f.IsDeferred() || len(f.Deferrables) > 0 {
		return FallbackDeferred, false
	}
	for _, d := range f.Directives {
		if d.Name != "skip" && d.Name != "include" { // CollectFields applied those
			return FallbackDirective, false
		}
	}
	if f.Definition == nil {
		return 0, true // __typename
	}
	for _, d := range f.Definition.Directives {
		if d.Name != "deprecated" {
			return FallbackDirective, false
		}
	}
	for _, a := range f.Definition.Arguments {
		if !slices.Contains(args, a.Name) {
			return FallbackArgument, false
		}
	}
	return 0, true
}

// stringArg reads an optional String argument with gqlgen's coercion (a
// number is accepted as a String variable and becomes its digits).
func stringArg(v any) (string, bool) {
	if v == nil {
		return "", true
	}
	s, err := graphql.UnmarshalString(v)
	return s, err == nil
}
