// Package loader holds the per-request dataloaders of the read path: users,
// posts, comments, counters and viewer flags, each batch served by one
// Redis pipeline. Loaders are made per request for one viewer and never
// shared; their configuration is given once, to the Factory, when the
// application is wired.
package loader

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vikstrous/dataloadgen"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Reader lists the batch reads the loaders call, and nothing else. Every
// method takes n keys and returns n results in the same order (nil or zero
// for missing).
type Reader interface {
	Users(ctx context.Context, ids []string) ([]*social.User, error)
	UserCounts(ctx context.Context, ids []string) ([]social.UserCounts, error)
	Relations(ctx context.Context, viewerID string, ids []string) ([]social.Relation, error)
	// VisiblePosts returns nil for posts that do not exist, were deleted or
	// are hidden from the viewer.
	VisiblePosts(ctx context.Context, viewerID string, ids []string) ([]*social.Post, error)
	PostCounts(ctx context.Context, ids []string) ([]social.PostCounts, error)
	Marks(ctx context.Context, viewerID string, postIDs []string) ([]social.Marks, error)
	Comments(ctx context.Context, ids []string) ([]*social.Comment, error)
	// PostEdits returns each post's earlier versions, newest first.
	PostEdits(ctx context.Context, ids []string) ([][]social.PostEdit, error)
	// UserDetails loads users with what w asks for in one round trip.
	UserDetails(ctx context.Context, viewerID string, ids []string, w readplan.UserWants) (readplan.UserDetails, error)
	// ListPages reads a page of each key's list as the viewer may see
	// it, with an error per key or one for all.
	ListPages(ctx context.Context, viewerID string, keys []readplan.ListKey) ([]readplan.ListPage, []error)
	// UserPages reads pages of users' own posts as the viewer may see
	// them, with an error per key or one for all.
	UserPages(ctx context.Context, viewerID string, keys []readplan.UserPageKey) ([]*readplan.Page, []error)
	// Follows reports whether each pair's follower follows its followee.
	Follows(ctx context.Context, pairs []social.FollowPair) ([]bool, error)
	// PinnedIDs returns the ids of each user's pinned posts, most
	// recently pinned first (whoever may see them).
	PinnedIDs(ctx context.Context, userIDs []string) ([][]string, error)
}

// UserKey asks for a user with what Wants says (profile, counters,
// relation to the viewer).
type UserKey struct {
	ID    string
	Wants readplan.UserWants
}

// Config tunes the loaders. Wait is how long a loader collects keys
// before it fetches. gqlgen resolves the fields of a list's elements
// concurrently, so nearly every key of one query level arrives within
// microseconds; dataloadgen's default 16 ms would be paid once per level.
// A batch also fetches at once when it reaches BatchCapacity keys.
type Config struct {
	Wait          time.Duration
	BatchCapacity int
}

// DefaultConfig is the configuration the gateway serves with
// (docs/performance.md has the measurements behind it).
func DefaultConfig() Config {
	return Config{Wait: 250 * time.Microsecond, BatchCapacity: 1000}
}

// Factory makes the loaders of each request with one configuration, read
// once when the application is wired.
type Factory struct {
	store Reader
	opts  []dataloadgen.Option
}

// NewFactory returns a factory of batching, caching loaders over s; zero
// fields of c take DefaultConfig's values.
func NewFactory(s Reader, c Config) *Factory {
	d := DefaultConfig()
	if c.Wait <= 0 {
		c.Wait = d.Wait
	}
	if c.BatchCapacity <= 0 {
		c.BatchCapacity = d.BatchCapacity
	}
	return &Factory{store: s, opts: []dataloadgen.Option{dataloadgen.WithWait(c.Wait), dataloadgen.WithBatchCapacity(c.BatchCapacity)}}
}

// Loaders are the loaders of one request.
type Loaders struct {
	ViewerID   string
	factory    *Factory // made them, and makes their fresh successors
	Users      *dataloadgen.Loader[string, *social.User]
	UserCounts *dataloadgen.Loader[string, social.UserCounts]
	Relations  *dataloadgen.Loader[string, social.Relation]
	Posts      *dataloadgen.Loader[string, *social.Post]
	PostCounts *dataloadgen.Loader[string, social.PostCounts]
	Marks      *dataloadgen.Loader[string, social.Marks]
	Comments   *dataloadgen.Loader[string, *social.Comment]
	// Edits loads posts' earlier versions (Post.edits).
	Edits *dataloadgen.Loader[string, []social.PostEdit]
	// Follows tells whether one user follows another (any two users).
	Follows *dataloadgen.Loader[social.FollowPair, bool]
	// Details loads users with their counters and relations as a list's
	// selection asks, and primes Users, UserCounts and Relations.
	Details *dataloadgen.Loader[UserKey, *social.User]
	// Lists loads pages of the lists below objects (followers, likers,
	// comments, ...), keyed by parent and page arguments.
	Lists *dataloadgen.Loader[readplan.ListKey, readplan.ListPage]
	// UserPages loads pages of users' own posts (User.posts and
	// userTimeline), keyed by user, page arguments and what the page
	// brings along.
	UserPages *dataloadgen.Loader[readplan.UserPageKey, *readplan.Page]
	// Pins loads the ids of users' pinned posts (User.pinnedPosts); the
	// posts themselves come through Posts, which checks them.
	Pins *dataloadgen.Loader[string, []string]

	// self is the account a register, login or refresh of this request
	// just authenticated as: its payload may show that user's private
	// fields although the request itself carried no token. Loaders made
	// Fresh for the same request share it.
	self *atomic.Pointer[string]

	// commentPages holds the first comments of posts fetched with a page
	// (post id → Connection[string] of the first n comments), so
	// Post.comments does not query again.
	commentPages sync.Map

	// homePages holds home pages the timeline fast path fetched but could
	// not render, for the resolver to render instead of fetching again
	// (homePageKey → *readplan.Page).
	homePages sync.Map

	// The read-ahead's way into the loaders above (Fetch*).
	lists     *eager[readplan.ListKey, readplan.ListPage]
	userPages *eager[readplan.UserPageKey, *readplan.Page]
	details   *eager[UserKey, *social.User]
	posts     *eager[string, *social.Post]
}

type homePageKey struct {
	p social.PageRequest
	w readplan.PageWants
}

// PrimeHomePage hands a home page fetched for p with w to the Timeline
// resolver.
func (l *Loaders) PrimeHomePage(p social.PageRequest, w readplan.PageWants, page *readplan.Page) {
	l.homePages.Store(homePageKey{p, w}, page)
}

// HomePage returns the home page primed for p and w, if any.
func (l *Loaders) HomePage(p social.PageRequest, w readplan.PageWants) (*readplan.Page, bool) {
	v, ok := l.homePages.Load(homePageKey{p, w})
	if !ok {
		return nil, false
	}
	return v.(*readplan.Page), true
}

// PrimeCommentPage records the first comments of a post as fetched with a
// timeline page.
func (l *Loaders) PrimeCommentPage(postID string, c social.Connection[*social.Comment]) {
	l.commentPages.Store(postID, c)
}

// CommentPage returns the first comments of a post when a page fetch
// already read at least p.First of them from the top.
func (l *Loaders) CommentPage(postID string, p social.PageRequest) (social.Connection[*social.Comment], bool) {
	v, ok := l.commentPages.Load(postID)
	if !ok || p.After != "" {
		return social.Connection[*social.Comment]{}, false
	}
	return FirstComments(v.(social.Connection[*social.Comment]), p.First)
}

// FirstComments cuts the first comments of a post, read from the top, to
// the first n: false when fewer were read than asked for and more exist.
// Post.comments' resolver (through CommentPage) and the timeline fast path
// both serve a page's comments through it.
func FirstComments(c social.Connection[*social.Comment], n int) (social.Connection[*social.Comment], bool) {
	if len(c.Items) >= n {
		return social.Connection[*social.Comment]{
			Items: c.Items[:n], Cursors: c.Cursors[:n],
			HasNext: len(c.Items) > n || c.HasNext, Total: c.Total,
		}, true
	}
	if c.HasNext {
		return social.Connection[*social.Comment]{}, false // fewer read than asked for
	}
	return c, true
}

// Fresh returns empty loaders for the same request: the same viewer, who
// also counts as whoever a register, login or refresh of the request
// authenticated, before or after. A mutation field given fresh loaders
// reads what the fields before it wrote.
func (l *Loaders) Fresh() *Loaders {
	n := l.factory.New(l.ViewerID)
	n.self = l.self
	return n
}

// ActAs records that this request authenticated as userID.
func (l *Loaders) ActAs(userID string) { l.self.Store(&userID) }

// IsSelf reports whether userID is the viewer of this request, by token or
// by a register, login or refresh in it.
func (l *Loaders) IsSelf(userID string) bool {
	if userID == "" {
		return false
	}
	if l.ViewerID == userID {
		return true
	}
	p := l.self.Load()
	return p != nil && *p == userID
}

// New returns the loaders for one request of viewerID ("" when
// anonymous).
func (f *Factory) New(viewerID string) *Loaders {
	s, o := f.store, f.opts
	users := batch(s.Users)
	relations := batch(func(ctx context.Context, ids []string) ([]social.Relation, error) {
		if viewerID == "" {
			return make([]social.Relation, len(ids)), nil
		}
		return s.Relations(ctx, viewerID, ids)
	})
	posts := batch(func(ctx context.Context, ids []string) ([]*social.Post, error) {
		return s.VisiblePosts(ctx, viewerID, ids)
	})
	marks := batch(func(ctx context.Context, ids []string) ([]social.Marks, error) {
		if viewerID == "" {
			return make([]social.Marks, len(ids)), nil
		}
		return s.Marks(ctx, viewerID, ids)
	})
	lists := func(ctx context.Context, keys []readplan.ListKey) ([]readplan.ListPage, []error) {
		return s.ListPages(ctx, viewerID, keys)
	}
	userPages := func(ctx context.Context, keys []readplan.UserPageKey) ([]*readplan.Page, []error) {
		return s.UserPages(ctx, viewerID, keys)
	}
	l := &Loaders{
		ViewerID:   viewerID,
		factory:    f,
		self:       new(atomic.Pointer[string]),
		Users:      dataloadgen.NewLoader(users, o...),
		UserCounts: dataloadgen.NewLoader(batch(s.UserCounts), o...),
		Relations:  dataloadgen.NewLoader(relations, o...),
		Posts:      dataloadgen.NewLoader(posts, o...),
		PostCounts: dataloadgen.NewLoader(batch(s.PostCounts), o...),
		Marks:      dataloadgen.NewLoader(marks, o...),
		Comments:   dataloadgen.NewLoader(batch(s.Comments), o...),
		Edits:      dataloadgen.NewLoader(batch(s.PostEdits), o...),
		Follows:    dataloadgen.NewLoader(batch(s.Follows), o...),
		Lists:      dataloadgen.NewLoader(lists, o...),
		UserPages:  dataloadgen.NewLoader(userPages, o...),
		Pins:       dataloadgen.NewLoader(batch(s.PinnedIDs), o...),
	}
	details := l.detailsBatch(s)
	l.Details = dataloadgen.NewLoader(details, o...)
	l.lists = newEager(l.Lists, lists)
	l.userPages = newEager(l.UserPages, userPages)
	l.details = newEager(l.Details, details)
	l.posts = newEager(l.Posts, posts)
	return l
}

// detailsBatch is the batch function of Details: one UserDetails call for the
// batch's users with everything any of its keys wants, whose results also
// prime the per-field loaders.
func (l *Loaders) detailsBatch(s Reader) func(context.Context, []UserKey) ([]*social.User, []error) {
	return func(ctx context.Context, keys []UserKey) ([]*social.User, []error) {
		w := readplan.UserWants{Profiles: true}
		ids := make([]string, 0, len(keys))
		at := make(map[string]int, len(keys))
		for _, k := range keys {
			w.Counts = w.Counts || k.Wants.Counts
			w.Relations = w.Relations || k.Wants.Relations
			if _, ok := at[k.ID]; !ok {
				at[k.ID] = len(ids)
				ids = append(ids, k.ID)
			}
		}
		viewer := l.ViewerID
		d, err := s.UserDetails(ctx, viewer, ids, w)
		if err != nil {
			return nil, []error{err}
		}
		for i, id := range ids {
			if u := d.Users[i]; u != nil {
				l.Users.Prime(id, u)
			}
			if w.Counts {
				l.UserCounts.Prime(id, d.Counts[i])
			}
			if w.Relations && viewer != "" {
				l.Relations.Prime(id, d.Relations[i])
			}
		}
		out := make([]*social.User, len(keys))
		for i, k := range keys {
			out[i] = d.Users[at[k.ID]]
		}
		return out, nil
	}
}

// batch adapts a store batch call (one error for the whole batch) to
// dataloadgen's fetch signature.
func batch[K comparable, V any](f func(context.Context, []K) ([]V, error)) func(context.Context, []K) ([]V, []error) {
	return func(ctx context.Context, keys []K) ([]V, []error) {
		vs, err := f(ctx, keys)
		if err != nil {
			return nil, []error{err}
		}
		return vs, nil
	}
}

type ctxKey struct{}

// With returns a context carrying l.
func With(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// For returns the loaders of the request. It panics when the handler did
// not install them, which is a wiring bug, not a runtime condition.
func For(ctx context.Context) *Loaders {
	l, ok := ctx.Value(ctxKey{}).(*Loaders)
	if !ok {
		panic("loader: no loaders in context")
	}
	return l
}
