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

	"github.com/socialgw/gateway/internal/social"
)

// Store is the batch interface the loaders read through. Every method takes
// n keys and returns n results in the same order (nil or zero for missing).
type Store interface {
	Users(ctx context.Context, ids []string) ([]*social.User, error)
	UserCounts(ctx context.Context, ids []string) ([]social.UserCounts, error)
	Relations(ctx context.Context, viewerID string, ids []string) ([]social.Relation, error)
	// VisiblePosts returns nil for posts that do not exist, were deleted or
	// are hidden from the viewer.
	VisiblePosts(ctx context.Context, viewerID string, ids []string) ([]*social.Post, error)
	PostCounts(ctx context.Context, ids []string) ([]social.PostCounts, error)
	Liked(ctx context.Context, viewerID string, postIDs []string) ([]bool, error)
	Comments(ctx context.Context, ids []string) ([]*social.Comment, error)
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
	store Store
	opts  []dataloadgen.Option
}

// NewFactory returns a factory of batching, caching loaders over s; zero
// fields of c take DefaultConfig's values.
func NewFactory(s Store, c Config) *Factory {
	d := DefaultConfig()
	if c.Wait <= 0 {
		c.Wait = d.Wait
	}
	if c.BatchCapacity <= 0 {
		c.BatchCapacity = d.BatchCapacity
	}
	return &Factory{store: s, opts: []dataloadgen.Option{dataloadgen.WithWait(c.Wait), dataloadgen.WithBatchCapacity(c.BatchCapacity)}}
}

// NewNaiveFactory returns a factory of loaders that do not batch or cache:
// every Load is its own fetch at once, what resolvers without dataloaders
// do, one Redis call per field. The benchmark compares against it; nothing
// serves traffic with it.
func NewNaiveFactory(s Store) *Factory {
	return &Factory{store: s, opts: []dataloadgen.Option{dataloadgen.WithWait(0), dataloadgen.WithBatchCapacity(1), dataloadgen.WithoutCache()}}
}

// Loaders are the loaders of one request.
type Loaders struct {
	ViewerID   string
	Users      *dataloadgen.Loader[string, *social.User]
	UserCounts *dataloadgen.Loader[string, social.UserCounts]
	Relations  *dataloadgen.Loader[string, social.Relation]
	Posts      *dataloadgen.Loader[string, *social.Post]
	PostCounts *dataloadgen.Loader[string, social.PostCounts]
	Liked      *dataloadgen.Loader[string, bool]
	Comments   *dataloadgen.Loader[string, *social.Comment]

	// self is the account a register, login or refresh of this request
	// just authenticated as: its payload may show that user's private
	// fields although the request itself carried no token.
	self atomic.Pointer[string]

	// commentPages holds the first comments of posts fetched with a page
	// (post id → Connection[string] of the first n comments), so
	// Post.comments does not query again.
	commentPages sync.Map
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
	c := v.(social.Connection[*social.Comment])
	if len(c.Items) >= p.First {
		return social.Connection[*social.Comment]{
			Items: c.Items[:p.First], Cursors: c.Cursors[:p.First],
			HasNext: len(c.Items) > p.First || c.HasNext, Total: c.Total,
		}, true
	}
	if c.HasNext {
		return social.Connection[*social.Comment]{}, false // fewer read than asked for
	}
	return c, true
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
	return &Loaders{
		ViewerID:   viewerID,
		Users:      dataloadgen.NewLoader(batch(s.Users), o...),
		UserCounts: dataloadgen.NewLoader(batch(s.UserCounts), o...),
		Relations: dataloadgen.NewLoader(batch(func(ctx context.Context, ids []string) ([]social.Relation, error) {
			if viewerID == "" {
				return make([]social.Relation, len(ids)), nil
			}
			return s.Relations(ctx, viewerID, ids)
		}), o...),
		Posts: dataloadgen.NewLoader(batch(func(ctx context.Context, ids []string) ([]*social.Post, error) {
			return s.VisiblePosts(ctx, viewerID, ids)
		}), o...),
		PostCounts: dataloadgen.NewLoader(batch(s.PostCounts), o...),
		Liked: dataloadgen.NewLoader(batch(func(ctx context.Context, ids []string) ([]bool, error) {
			if viewerID == "" {
				return make([]bool, len(ids)), nil
			}
			return s.Liked(ctx, viewerID, ids)
		}), o...),
		Comments: dataloadgen.NewLoader(batch(s.Comments), o...),
	}
}

// batch adapts a store batch call (one error for the whole batch) to
// dataloadgen's fetch signature.
func batch[V any](f func(context.Context, []string) ([]V, error)) func(context.Context, []string) ([]V, []error) {
	return func(ctx context.Context, keys []string) ([]V, []error) {
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
