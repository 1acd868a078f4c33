package readpath

import (
	"bytes"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// fastRenderer writes JSON as gqlgen's generated marshalers would. Each
// method returns false when the page lacks something, and the caller falls
// back to the ordinary path.
type fastRenderer struct {
	oc   *graphql.OperationContext
	page *readplan.Page
	l    *loader.Loaders
	buf  *bytes.Buffer
	// sets are the selection sets collected so far: a page renders the
	// same few once per post, and collecting them is a third of the
	// rendering's cost (gqlgen allocates a cache key and a field list on
	// every call).
	sets []collectedSet
	// pages are the comment pages asked for, by field (commentsPage).
	pages []fieldPage
	// pictures addresses profile pictures (fields_profile.go).
	pictures PictureURLs
}

// collectedSet is a selection set's fields for one type, with the JSON
// each field's value follows (`"alias":`, after a comma but for the first)
// and the render of each field's rule (fields.go).
type collectedSet struct {
	sel     ast.SelectionSet
	typ     string
	fields  []graphql.CollectedField
	keys    [][]byte
	renders []any
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
	fields := collect(fr.oc, sel, typ)
	c := collectedSet{sel: sel, typ: typ, fields: fields, keys: make([][]byte, 0, len(fields)), renders: make([]any, len(fields))}
	rules := fieldRules[typ]
	for i, f := range c.fields {
		var k bytes.Buffer
		if i > 0 {
			k.WriteByte(',')
		}
		graphql.MarshalString(f.Alias).MarshalGQL(&k)
		k.WriteByte(':')
		c.keys = append(c.keys, k.Bytes())
		c.renders[i] = rules[f.Name].render
	}
	fr.sets = append(fr.sets, c)
	return &fr.sets[len(fr.sets)-1]
}

// object writes {"alias":value,...} for the fields of sel, calling value
// for each field that is not __typename, with the render of its rule.
func (fr *fastRenderer) object(sel ast.SelectionSet, typ string, value func(f graphql.CollectedField, r any) bool) bool {
	b := fr.buf
	c := fr.collect(sel, typ)
	b.WriteByte('{')
	for i, f := range c.fields {
		b.Write(c.keys[i])
		if f.Name == "__typename" {
			fr.str(typ)
			continue
		}
		if !value(f, c.renders[i]) {
			return false
		}
	}
	b.WriteByte('}')
	return true
}

// renderObject writes the fields of sel on v, an object of typ, each by
// its rule's render.
func renderObject[T any](fr *fastRenderer, sel ast.SelectionSet, typ string, v T) bool {
	return fr.object(sel, typ, func(f graphql.CollectedField, r any) bool { return r.(render[T])(fr, f, v) })
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

// nullable writes a nullable String: s, or null when not ok.
func (fr *fastRenderer) nullable(s string, ok bool) {
	if ok {
		fr.str(s)
	} else {
		fr.null()
	}
}

func (fr *fastRenderer) time(t time.Time) {
	var a [40]byte
	fr.buf.Write(model.AppendTime(a[:0], t))
}

func (fr *fastRenderer) timeline(sel ast.SelectionSet) bool {
	c := fr.page.Posts
	return fr.object(sel, "Timeline", func(f graphql.CollectedField, _ any) bool {
		switch f.Name {
		case "edges":
			return fr.list(len(c.Items), func(i int) bool {
				return fr.object(f.Selections, "TimelineEdge", func(ef graphql.CollectedField, _ any) bool {
					if ef.Name == "cursor" {
						fr.str(c.Cursors[i])
						return true
					}
					return renderObject(fr, ef.Selections, "Post", c.Items[i])
				})
			})
		default: // pageInfo
			return fr.pageInfo(f.Selections, c.HasNext, c.HasPrevious, c.StartCursor(), c.EndCursor())
		}
	})
}

func (fr *fastRenderer) pageInfo(sel ast.SelectionSet, hasNext, hasPrevious bool, start, end string) bool {
	return fr.object(sel, "PageInfo", func(f graphql.CollectedField, _ any) bool {
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
		fr.nullable(cursor, cursor != "")
		return true
	})
}

// original renders Post.repostOf: null for a post that reposts nothing
// and for an original deleted or hidden from the viewer.
func (fr *fastRenderer) original(f graphql.CollectedField, p *social.Post) bool {
	if p.RepostOfID == "" {
		fr.null()
		return true
	}
	orig, ok := fr.page.Originals[p.RepostOfID]
	if !ok {
		return false
	}
	if orig == nil {
		fr.null()
		return true
	}
	return renderObject(fr, f.Selections, "Post", orig)
}

// comments renders Post.comments from the first comments the page read,
// cut to the field's own first argument as the resolver cuts them
// (loader.FirstComments).
func (fr *fastRenderer) comments(f graphql.CollectedField, postID string) bool {
	p, ok := fr.commentsPage(f)
	if !ok {
		return false
	}
	c, ok := fr.page.Comments[postID]
	if !ok {
		return false
	}
	if c, ok = loader.FirstComments(c, p.First); !ok {
		return false
	}
	return fr.object(f.Selections, "CommentConnection", func(cf graphql.CollectedField, _ any) bool {
		switch cf.Name {
		case "totalCount":
			fr.int(c.Total)
			return true
		case "pageInfo":
			return fr.pageInfo(cf.Selections, c.HasNext, c.HasPrevious, c.StartCursor(), c.EndCursor())
		}
		return fr.list(len(c.Items), func(i int) bool {
			return fr.object(cf.Selections, "CommentEdge", func(ef graphql.CollectedField, _ any) bool {
				if ef.Name == "cursor" {
					fr.str(c.Cursors[i])
					return true
				}
				return renderObject(fr, ef.Selections, "Comment", c.Items[i])
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

// user renders a profile; a user the page does not hold (not read, or
// deleted) sends the request down the ordinary path, which reports it.
func (fr *fastRenderer) user(sel ast.SelectionSet, u *social.User) bool {
	if u == nil {
		return false
	}
	return renderObject(fr, sel, "User", u)
}

// The renders of fields (fields.go) that write a scalar.

// scalar renders the value get reads of the object, written by write.
func scalar[T, V any](get func(T) V, write func(*fastRenderer, V)) render[T] {
	return func(fr *fastRenderer, _ graphql.CollectedField, v T) bool {
		write(fr, get(v))
		return true
	}
}

// str renders a String or an ID.
func str[T any](get func(T) string) render[T] { return scalar(get, (*fastRenderer).str) }

// renderTime renders a Time.
func renderTime[T any](get func(T) time.Time) render[T] { return scalar(get, (*fastRenderer).time) }

// nullable renders a nullable String.
func nullable[T any](get func(T) (string, bool)) render[T] {
	return func(fr *fastRenderer, _ graphql.CollectedField, v T) bool {
		fr.nullable(get(v))
		return true
	}
}

// postCount renders one of a post's counters from the page.
func postCount(get func(social.PostCounts) int) render[*social.Post] {
	return onPage(func(pg *readplan.Page) map[string]social.PostCounts { return pg.Counts }, get, (*fastRenderer).int)
}

// postMark renders one of the viewer's marks on a post from the page.
func postMark(get func(social.Marks) bool) render[*social.Post] {
	return onPage(func(pg *readplan.Page) map[string]social.Marks { return pg.Marks }, get, (*fastRenderer).bool)
}

// onPage renders a post's value that the page holds (in the map at
// returns); false when it does not.
func onPage[K, V any](at func(*readplan.Page) map[string]K, get func(K) V, write func(*fastRenderer, V)) render[*social.Post] {
	return func(fr *fastRenderer, _ graphql.CollectedField, p *social.Post) bool {
		k, ok := at(fr.page)[p.ID]
		if ok {
			write(fr, get(k))
		}
		return ok
	}
}
