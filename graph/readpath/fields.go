package readpath

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// The fields of the schema as the hand-written read path knows them.
//
// Three pieces of hand-written code read a document's fields before the
// resolvers run: the look-ahead that plans a timeline page fetch
// (prefetch.go), the read-ahead of the lists below objects (lists.go) and
// the timeline fast path (fastpath.go). What any of them knows of a field
// is written here, once, in the field's rule; the rules of a type name
// all its fields, and TestFieldsCoverSchema holds them against the
// executable schema. The types of the fields' values come from the schema
// (a collected field's Definition), not from these tables.

// fieldRule is what the read path knows of one field of an object type.
// The zero rule is a field that needs nothing read ahead and that the fast
// path leaves to the ordinary path.
type fieldRule struct {
	// page adds to a timeline page fetch's wants what the field needs of
	// each post (Post fields); original is set below repostOf.
	page func(oc *graphql.OperationContext, f graphql.CollectedField, w *readplan.PageWants, original bool)
	// user is what a read of users must bring for the field (User fields).
	user readplan.UserWants
	// list is the list the read-ahead loads for the field on every object
	// of a level; posts marks User.posts, whose pages it loads the same way.
	list  readplan.List
	posts bool
	// reach, for an object field, is the objects the field leads to from
	// objects g, whose lists the read-ahead loads with g's level (false:
	// nothing below to read ahead).
	reach func(ctx context.Context, oc *graphql.OperationContext, g objects, f graphql.CollectedField) (objects, bool)
	// render writes the field on the timeline fast path: a render[T] for
	// the type's objects T. nil: a document selecting the field is left to
	// the ordinary path.
	render any
	// args are the arguments render reads. A field whose definition has
	// another (a default applies even when a document passes none) is left
	// to the ordinary path.
	args []string
	// topOnly: rendered on a page's posts, left to the ordinary path on a
	// reposted original (Post fields); original: the field's value is a
	// reposted original (repostOf).
	topOnly, original bool
}

// render writes one field of v as gqlgen's generated marshalers would;
// false when the page lacks something, and the fast path declines.
type render[T any] func(fr *fastRenderer, f graphql.CollectedField, v T) bool

// fieldRules are the rules of the types whose fields the read path reads,
// by type and field. (An initialization cycle — a post renders its
// original with these rules — makes them an init's.)
var fieldRules map[string]map[string]fieldRule

func init() {
	fieldRules = map[string]map[string]fieldRule{
		"Post":    postRules(),
		"User":    userRules(),
		"Comment": commentRules(),
		"Media":   mediaRules(),
	}
}

// connectionFields are the fields of the connection types the fast path
// renders, which it writes from the page's connections (fastpath.go:
// timeline, comments, pageInfo). Every field of these types is here.
var connectionFields = map[string][]string{
	"Timeline":          {"edges", "pageInfo"},
	"TimelineEdge":      {"cursor", "node"},
	"CommentConnection": {"edges", "pageInfo", "totalCount"},
	"CommentEdge":       {"cursor", "node"},
	"PageInfo":          {"hasNextPage", "endCursor", "hasPreviousPage", "startCursor"},
}

// fastRoots are the root fields the fast path renders, with the arguments
// it reads.
var fastRoots = map[string][]string{
	"timeline":     {"first", "after", "before"},
	"userTimeline": {"userId", "first", "after"},
}

func postRules() map[string]fieldRule {
	return map[string]fieldRule{
		"id":         {render: str(func(p *social.Post) string { return p.ID })},
		"content":    {render: str(func(p *social.Post) string { return p.Content })},
		"createdAt":  {render: renderTime(func(p *social.Post) time.Time { return p.CreatedAt })},
		"visibility": {render: str(func(p *social.Post) string { return string(Visibility(p)) })},
		"source":     {render: nullable(Source)},
		"author": {page: wantAuthors, reach: reachAuthors,
			render: render[*social.Post](func(fr *fastRenderer, f graphql.CollectedField, p *social.Post) bool {
				return fr.user(f.Selections, fr.page.Users[p.AuthorID])
			})},
		"likesCount":        {page: wantCounts, render: postCount(func(c social.PostCounts) int { return c.Likes })},
		"commentsCount":     {page: wantCounts, render: postCount(func(c social.PostCounts) int { return c.Comments })},
		"repostsCount":      {page: wantCounts, render: postCount(func(c social.PostCounts) int { return c.Reposts })},
		"viewerHasLiked":    {page: wantMarks, render: postMark(func(m social.Marks) bool { return m.Liked })},
		"viewerHasReposted": {page: wantMarks, render: postMark(func(m social.Marks) bool { return m.Reposted })},
		// The b flag of the viewer's flags, read with the likes' l.
		"viewerHasBookmarked": {page: wantMarks, render: postMark(func(m social.Marks) bool { return m.Bookmarked })},
		// A mutable field of the post hash, read with the post.
		"pinned": {render: scalar(func(p *social.Post) bool { return p.Pinned }, (*fastRenderer).bool)},
		"comments": {page: wantComments, list: readplan.ListComments, topOnly: true, args: []string{"first", "after"},
			render: render[*social.Post](func(fr *fastRenderer, f graphql.CollectedField, p *social.Post) bool {
				return fr.comments(f, p.ID)
			})},
		"repostOf": {page: wantOriginal, reach: reachPosts, topOnly: true, original: true,
			render: render[*social.Post]((*fastRenderer).original)},
		"likers":   {list: readplan.ListLikers},
		"onlyTo":   {},
		"notTo":    {},
		"location": {},
		"mentions": {},
		"media":    {},
		// Stored in the post hash and read with it: nothing to read
		// ahead; the fast path leaves them to the ordinary path.
		"spoilerText": {},
		"sensitive":   {},
		"editedAt":    {},
		// Read through the request's loader of edits, which batches a
		// level's posts.
		"edits": {},
		// Derived from the content (social.Tags): nothing to read ahead.
		"tags": {render: renderStrings(func(p *social.Post) []string { return p.Tags() })},
	}
}

// renderStrings renders a [String!]!.
func renderStrings[T any](get func(T) []string) render[T] {
	return func(fr *fastRenderer, _ graphql.CollectedField, v T) bool {
		fr.buf.WriteByte('[')
		for i, s := range get(v) {
			if i > 0 {
				fr.buf.WriteByte(',')
			}
			fr.str(s)
		}
		fr.buf.WriteByte(']')
		return true
	}
}

func userRules() map[string]fieldRule {
	counts := readplan.UserWants{Counts: true}
	relations := readplan.UserWants{Relations: true}
	return map[string]fieldRule{
		"id":        {render: str(func(u *social.User) string { return u.ID })},
		"name":      {render: str(func(u *social.User) string { return u.Name })},
		"createdAt": {render: renderTime(func(u *social.User) time.Time { return u.CreatedAt })},
		"bio":       {render: nullable(Bio)},
		// Read with the profile (fields_profile.go).
		"displayName": {render: nullable(DisplayName)},
		"avatar":      pictureRule(func(u *social.User) *social.ProfileImage { return u.Avatar }),
		"header":      pictureRule(func(u *social.User) *social.ProfileImage { return u.Header }),
		"email": {render: render[*social.User](func(fr *fastRenderer, _ graphql.CollectedField, u *social.User) bool {
			fr.nullable(Email(fr.l, u))
			return true
		})},
		"emailVerified": {render: render[*social.User](func(fr *fastRenderer, _ graphql.CollectedField, u *social.User) bool {
			if v, ok := EmailVerified(fr.l, u); ok {
				fr.bool(v)
			} else {
				fr.null()
			}
			return true
		})},
		"followersCount": {user: counts},
		"followingCount": {user: counts},
		"postsCount":     {user: readplan.UserWants{Counts: true, Relations: true}},
		"viewerFollows":  {user: relations},
		"followsViewer":  {user: relations},
		"viewerBlocked":  {user: relations},
		"viewerMuted":    {user: relations},
		// Read with the profile; its rule over posts is the store's.
		"locked": {render: scalar(func(u *social.User) bool { return u.Locked }, (*fastRenderer).bool)},
		// A ZSCORE in the user's FollowRequests, read with the relations.
		"viewerRequestedFollow": {user: relations},
		"follows":               {user: relations},
		"followers":             {list: readplan.ListFollowers},
		"following":             {list: readplan.ListFollowing},
		"commonFollowing":       {list: readplan.ListCommonFollowing},
		"posts":                 {posts: true},
		// Read by its resolver: the level's Pins in one batch, then their
		// posts through the post loader.
		"pinnedPosts": {},
	}
}

func commentRules() map[string]fieldRule {
	return map[string]fieldRule{
		"id":        {render: str(func(c *social.Comment) string { return c.ID })},
		"content":   {render: str(func(c *social.Comment) string { return c.Content })},
		"createdAt": {render: renderTime(func(c *social.Comment) time.Time { return c.CreatedAt })},
		"author": {reach: reachAuthors,
			render: render[*social.Comment](func(fr *fastRenderer, f graphql.CollectedField, c *social.Comment) bool {
				return fr.user(f.Selections, fr.page.Users[c.AuthorID])
			})},
		"post": {reach: reachPosts},
		// The answered comment is read through the comments loader.
		"inReplyTo": {},
		"replies":   {list: readplan.ListReplies},
	}
}

// ruleOf is the rule of typ's field f (the zero rule for __typename and
// for types without rules).
func ruleOf(typ string, f graphql.CollectedField) fieldRule {
	return fieldRules[typ][f.Name]
}

// valueType is the named type of a field's value (its list's elements').
func valueType(f graphql.CollectedField) string {
	if f.Definition == nil {
		return ""
	}
	return f.Definition.Type.Name()
}

// The rules of fields whose value is more than a struct field's, called by
// their resolvers (graph/schema.resolvers.go) and by the fast path alike,
// so that each holds in one place. A nullable String's value is (s, true),
// or null when false.

// Email is a user's e-mail address, shown to its owner only.
func Email(l *loader.Loaders, u *social.User) (string, bool) { return u.Email, l.IsSelf(u.ID) }

// EmailVerified says whether a user's address is confirmed, to its owner
// only.
func EmailVerified(l *loader.Loaders, u *social.User) (bool, bool) {
	return u.EmailVerified, l.IsSelf(u.ID)
}

// Bio is a user's bio; an empty one reads null.
func Bio(u *social.User) (string, bool) { return u.Bio, u.Bio != "" }

// Source is the client a post was sent from; none reads null.
func Source(p *social.Post) (string, bool) { return p.Source, p.Source != "" }

// Visibility is a post's visibility as the schema names it.
func Visibility(p *social.Post) model.Visibility { return model.Visibility(p.Visibility) }
