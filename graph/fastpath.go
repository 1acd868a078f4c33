package graph

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

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
// feed shows; see fastFields) and the page holds everything they need;
// anything else — a field it does not know, a @defer, bad arguments, a
// Redis error, an author that vanished — goes down the ordinary path, which
// then produces the same answer or the same error it always would. Field
// order, aliases, fragments, @skip/@include and __typename follow gqlgen's
// own field collection; scalars are written by the same marshalers the
// generated code uses. TestFastPathMatchesGeneric runs a corpus of
// documents both ways and requires byte-identical responses.
func (r *Resolver) fastPath(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	rf := graphql.GetRootFieldContext(ctx)
	if rf == nil || (rf.Field.Name != "timeline" && rf.Field.Name != "userTimeline") {
		return next(ctx)
	}
	stats := r.fast
	decline := func(reason FallbackReason) graphql.Marshaler {
		stats.fallbacks[reason].Add(1)
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return decline(FallbackOperation)
	}
	// Everything the fast path declines for the document alone is decided
	// here, before any fetch.
	if reason, ok := fastField(rf.Field, "Query"); !ok {
		return decline(reason)
	}
	if reason, ok := fastSupported(oc, rf.Field.Selections, "Timeline"); !ok {
		return decline(reason)
	}
	args := rf.Field.ArgumentMap(oc.Variables)
	first, ok := optionalInt(args["first"])
	if !ok {
		return decline(FallbackBadArguments)
	}
	after, ok1 := stringArg(args["after"])
	before, ok2 := stringArg(args["before"])
	if !ok1 || !ok2 {
		return decline(FallbackBadArguments)
	}
	p, err := social.NewTwoWayRequest(first, &after, &before)
	if err != nil {
		return decline(FallbackBadArguments)
	}
	viewer := social.ViewerID(ctx)
	w := timelineWants(oc, fieldSel(rf.Field))
	l := loader.For(ctx)
	var page *social.Page
	var handOff func()
	switch rf.Field.Name {
	case "timeline":
		if viewer == "" {
			return decline(FallbackAnonymous)
		}
		page, err = r.Posts.HomePage(ctx, viewer, p, w)
		handOff = func() { l.PrimeHomePage(p, w, page) }
	default:
		userID, uerr := graphql.UnmarshalID(args["userId"]) // IDs may arrive as numbers
		if uerr != nil {
			return decline(FallbackBadArguments)
		}
		// Fetched directly, not through the loader: the fast path has no
		// other page to batch with and would only wait out its window.
		page, err = r.Posts.UserPage(ctx, viewer, userID, p, w)
		handOff = func() { l.PrimeUserPage(social.UserPageKey{User: userID, Page: p, Wants: w}, page) }
	}
	if err != nil {
		return decline(FallbackFetchError)
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	fr := fastRenderer{oc: oc, page: page, l: l, buf: buf}
	if !fr.timeline(rf.Field.Selections) {
		bufPool.Put(buf)
		// The page lacks something the renderer needs (an author that
		// vanished, say): the ordinary path renders it from the same page,
		// without fetching it again.
		handOff()
		return decline(FallbackIncompletePage)
	}
	stats.served.Add(1)
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(buf.Bytes())
		bufPool.Put(buf)
	})
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

// fastFields are the fields the fast path renders, by type; the value is
// the type of the field's selection ("" for leaves).
var fastFields = map[string]map[string]string{
	"Timeline":          {"edges": "TimelineEdge", "pageInfo": "PageInfo"},
	"TimelineEdge":      {"cursor": "", "node": "Post"},
	"PageInfo":          {"hasNextPage": "", "endCursor": "", "hasPreviousPage": "", "startCursor": ""},
	"Post":              {"id": "", "content": "", "createdAt": "", "visibility": "", "author": "User", "likesCount": "", "commentsCount": "", "repostsCount": "", "viewerHasLiked": "", "viewerHasReposted": "", "source": "", "comments": "CommentConnection", "repostOf": "Original"},
	"Original":          {"id": "", "content": "", "createdAt": "", "visibility": "", "author": "User", "likesCount": "", "commentsCount": "", "repostsCount": "", "viewerHasLiked": "", "viewerHasReposted": "", "source": ""},
	"User":              {"id": "", "name": "", "email": "", "bio": "", "createdAt": ""},
	"CommentConnection": {"edges": "CommentEdge", "pageInfo": "PageInfo", "totalCount": ""},
	"CommentEdge":       {"cursor": "", "node": "Comment"},
	"Comment":           {"id": "", "content": "", "createdAt": "", "author": "User"},
}

// fastFallbacks are the fields of the rendered types that the fast path
// leaves to the ordinary path (a document selecting one is not rendered
// fast). Together with fastFields they name every field of those types:
// TestFastPathCoversSchema fails when the schema gains a field that is in
// neither, so a new field cannot be answered wrongly, or silently slowly.
var fastFallbacks = map[string][]string{
	"Post":     {"onlyTo", "notTo", "likers", "location", "mentions", "media"},
	"Original": {"onlyTo", "notTo", "likers", "comments", "repostOf", "location", "mentions", "media"},
	"Comment":  {"post"},
	"User":     {"followersCount", "followingCount", "postsCount", "viewerFollows", "followsViewer", "viewerBlocked", "viewerMuted", "follows", "followers", "following", "commonFollowing", "posts"},
}

// fastArgs are the arguments the fast path reads, by type and field; a
// field whose definition has any other argument (a default applies even
// when the document does not pass it) is not rendered fast.
var fastArgs = map[string]map[string][]string{
	"Query": {"timeline": {"first", "after", "before"}, "userTimeline": {"userId", "first", "after"}},
	"Post":  {"comments": {"first", "after"}},
}

// graphqlType is the schema type behind a fastFields type.
func graphqlType(t string) string {
	if t == "Original" {
		return "Post" // a reposted original: a Post without comments or repostOf
	}
	return t
}

// fastSupported reports whether every field of sel (of type typ) is one the
// fast path renders, with arguments and directives it understands; when
// not, why.
func fastSupported(oc *graphql.OperationContext, sel ast.SelectionSet, typ string) (FallbackReason, bool) {
	fields := fastFields[typ]
	for _, f := range collect(oc, sel, graphqlType(typ)) {
		child, ok := fields[f.Name]
		if !ok && f.Name != "__typename" {
			return FallbackField, false
		}
		if reason, ok := fastField(f, typ); !ok {
			return reason, false
		}
		if child != "" {
			if reason, ok := fastSupported(oc, f.Selections, child); !ok {
				return reason, false
			}
		}
	}
	return 0, true
}

// fastField checks one field's directives (in the document and in the
// schema) and the arguments its definition declares.
func fastField(f graphql.CollectedField, typ string) (FallbackReason, bool) {
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
		if !slices.Contains(fastArgs[graphqlType(typ)][f.Name], a.Name) {
			return FallbackArgument, false
		}
	}
	return 0, true
}

// fastRenderer writes JSON as gqlgen's generated marshalers would. Each
// method returns false when the page lacks something, and the caller falls
// back to the ordinary path.
type fastRenderer struct {
	oc   *graphql.OperationContext
	page *social.Page
	l    *loader.Loaders
	buf  *bytes.Buffer
	// sets are the selection sets collected so far: a page renders the
	// same few once per post, and collecting them is a third of the
	// rendering's cost (gqlgen allocates a cache key and a field list on
	// every call).
	sets []collectedSet
	// pages are the comment pages asked for, by field (commentsPage).
	pages []fieldPage
}

// collectedSet is a selection set's fields for one type, with the JSON
// each field's value follows: `"alias":`, after a comma but for the first.
type collectedSet struct {
	sel    ast.SelectionSet
	typ    string
	fields []graphql.CollectedField
	keys   [][]byte
}

// collect returns the fields of sel for typ, collected once per render.
// Selection sets are told apart by identity: the document's, not a copy.
func (fr *fastRenderer) collect(sel ast.SelectionSet, typ string) *collectedSet {
	for i := range fr.sets {
		c := &fr.sets[i]
		if c.typ == typ && len(c.sel) == len(sel) && (len(sel) == 0 || &c.sel[0] == &sel[0]) {
			return c
		}
	}
	c := collectedSet{sel: sel, typ: typ, fields: collect(fr.oc, sel, typ)}
	for i, f := range c.fields {
		var k bytes.Buffer
		if i > 0 {
			k.WriteByte(',')
		}
		graphql.MarshalString(f.Alias).MarshalGQL(&k)
		k.WriteByte(':')
		c.keys = append(c.keys, k.Bytes())
	}
	fr.sets = append(fr.sets, c)
	return &fr.sets[len(fr.sets)-1]
}

// object writes {"alias":value,...} for the fields of sel, calling value
// for each field that is not __typename.
func (fr *fastRenderer) object(sel ast.SelectionSet, typ string, value func(f graphql.CollectedField) bool) bool {
	b := fr.buf
	c := fr.collect(sel, typ)
	b.WriteByte('{')
	for i, f := range c.fields {
		b.Write(c.keys[i])
		if f.Name == "__typename" {
			fr.str(typ)
			continue
		}
		if !value(f) {
			return false
		}
	}
	b.WriteByte('}')
	return true
}

// list writes [elem(0),elem(1),...].
func (fr *fastRenderer) list(n int, elem func(i int) bool) bool {
	fr.buf.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			fr.buf.WriteByte(',')
		}
		if !elem(i) {
			return false
		}
	}
	fr.buf.WriteByte(']')
	return true
}

// The scalars, written as gqlgen's marshalers write them (graphql.Marshal*
// and model.MarshalTime), without the closure each of those allocates.

// str writes a String or ID as graphql.MarshalString does: quoted, with
// control characters, quotes and backslashes escaped, nothing else.
func (fr *fastRenderer) str(s string) {
	b := fr.buf
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

const hexDigits = "0123456789ABCDEF" // upper case, as gqlgen writes them

func (fr *fastRenderer) int(n int) {
	var a [20]byte
	fr.buf.Write(strconv.AppendInt(a[:0], int64(n), 10))
}

func (fr *fastRenderer) bool(v bool) {
	if v {
		fr.buf.WriteString("true")
	} else {
		fr.buf.WriteString("false")
	}
}

func (fr *fastRenderer) null() { fr.buf.WriteString("null") }

func (fr *fastRenderer) time(t time.Time) {
	var a [40]byte
	fr.buf.Write(model.AppendTime(a[:0], t))
}

func (fr *fastRenderer) timeline(sel ast.SelectionSet) bool {
	c := fr.page.Posts
	return fr.object(sel, "Timeline", func(f graphql.CollectedField) bool {
		switch f.Name {
		case "edges":
			return fr.list(len(c.Items), func(i int) bool {
				return fr.object(f.Selections, "TimelineEdge", func(ef graphql.CollectedField) bool {
					if ef.Name == "cursor" {
						fr.str(c.Cursors[i])
						return true
					}
					return fr.post(ef.Selections, c.Items[i], false)
				})
			})
		default: // pageInfo
			return fr.pageInfo(f.Selections, c.HasNext, c.HasPrevious, c.StartCursor(), c.EndCursor())
		}
	})
}

func (fr *fastRenderer) pageInfo(sel ast.SelectionSet, hasNext, hasPrevious bool, start, end string) bool {
	return fr.object(sel, "PageInfo", func(f graphql.CollectedField) bool {
		cursor := end
		switch f.Name {
		case "hasNextPage":
			fr.bool(hasNext)
			return true
		case "hasPreviousPage":
			fr.bool(hasPrevious)
			return true
		case "startCursor":
			cursor = start
		}
		if cursor == "" {
			fr.null()
		} else {
			fr.str(cursor)
		}
		return true
	})
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

func (fr *fastRenderer) post(sel ast.SelectionSet, p *social.Post, original bool) bool {
	pg := fr.page
	return fr.object(sel, "Post", func(f graphql.CollectedField) bool {
		switch f.Name {
		case "id":
			fr.str(p.ID)
		case "content":
			fr.str(p.Content)
		case "source":
			if p.Source == "" {
				fr.null()
			} else {
				fr.str(p.Source)
			}
		case "createdAt":
			fr.time(p.CreatedAt)
		case "visibility":
			fr.str(string(model.Visibility(p.Visibility)))
		case "author":
			return fr.user(f.Selections, pg.Users[p.AuthorID])
		case "likesCount", "commentsCount", "repostsCount":
			n, ok := pg.Counts[p.ID]
			if !ok {
				return false
			}
			v := n.Likes
			if f.Name == "commentsCount" {
				v = n.Comments
			} else if f.Name == "repostsCount" {
				v = n.Reposts
			}
			fr.int(v)
		case "viewerHasLiked", "viewerHasReposted":
			m, ok := pg.Marks[p.ID]
			if !ok {
				return false
			}
			fr.bool(m.Liked && f.Name == "viewerHasLiked" || m.Reposted && f.Name == "viewerHasReposted")
		case "comments":
			return fr.comments(f, p.ID)
		case "repostOf":
			if p.RepostOfID == "" {
				fr.null()
				return true
			}
			orig, ok := pg.Originals[p.RepostOfID]
			if !ok {
				return false
			}
			if orig == nil {
				fr.null()
				return true
			}
			return fr.post(f.Selections, orig, true)
		}
		return true
	})
}

// comments renders Post.comments from the first comments the page read,
// cut to the field's own first argument, as loader.CommentPage does.
func (fr *fastRenderer) comments(f graphql.CollectedField, postID string) bool {
	p, ok := fr.commentsPage(f)
	if !ok {
		return false
	}
	c, ok := fr.page.Comments[postID]
	if !ok {
		return false
	}
	if len(c.Items) >= p.First {
		c = social.Connection[*social.Comment]{Items: c.Items[:p.First], Cursors: c.Cursors[:p.First], HasNext: len(c.Items) > p.First || c.HasNext, Total: c.Total}
	} else if c.HasNext {
		return false
	}
	return fr.object(f.Selections, "CommentConnection", func(cf graphql.CollectedField) bool {
		switch cf.Name {
		case "totalCount":
			fr.int(c.Total)
			return true
		case "pageInfo":
			return fr.pageInfo(cf.Selections, c.HasNext, c.HasPrevious, c.StartCursor(), c.EndCursor())
		}
		return fr.list(len(c.Items), func(i int) bool {
			return fr.object(cf.Selections, "CommentEdge", func(ef graphql.CollectedField) bool {
				if ef.Name == "cursor" {
					fr.str(c.Cursors[i])
					return true
				}
				return fr.comment(ef.Selections, c.Items[i])
			})
		})
	})
}

// commentsPage is the page a Post.comments field asks for, read from its
// arguments once per render (every post of the page has the same field);
// false for arguments the renderer does not serve.
func (fr *fastRenderer) commentsPage(f graphql.CollectedField) (social.PageRequest, bool) {
	for _, a := range fr.pages {
		if a.field == f.Field {
			return a.page, a.ok
		}
	}
	a := fieldPage{field: f.Field}
	args := f.ArgumentMap(fr.oc.Variables)
	if first, ok := optionalInt(args["first"]); ok && args["after"] == nil {
		p, err := social.NewPageRequest(first, nil)
		a.page, a.ok = p, err == nil
	}
	fr.pages = append(fr.pages, a)
	return a.page, a.ok
}

// fieldPage is the page a field's arguments ask for.
type fieldPage struct {
	field *ast.Field
	page  social.PageRequest
	ok    bool
}

func (fr *fastRenderer) comment(sel ast.SelectionSet, c *social.Comment) bool {
	return fr.object(sel, "Comment", func(f graphql.CollectedField) bool {
		switch f.Name {
		case "id":
			fr.str(c.ID)
		case "content":
			fr.str(c.Content)
		case "createdAt":
			fr.time(c.CreatedAt)
		case "author":
			return fr.user(f.Selections, fr.page.Users[c.AuthorID])
		}
		return true
	})
}

// user renders a profile; a user the page does not hold (not read, or
// deleted) sends the request down the ordinary path, which reports it.
func (fr *fastRenderer) user(sel ast.SelectionSet, u *social.User) bool {
	if u == nil {
		return false
	}
	return fr.object(sel, "User", func(f graphql.CollectedField) bool {
		switch f.Name {
		case "id":
			fr.str(u.ID)
		case "name":
			fr.str(u.Name)
		case "email":
			if fr.l.IsSelf(u.ID) {
				fr.str(u.Email)
			} else {
				fr.null()
			}
		case "bio":
			if u.Bio == "" {
				fr.null()
			} else {
				fr.str(u.Bio)
			}
		case "createdAt":
			fr.time(u.CreatedAt)
		}
		return true
	})
}
