package loader

import (
	"context"
	"sync"

	"github.com/vikstrous/dataloadgen"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// The read-ahead (graph's lists and pages below a page) knows a whole
// level of keys at once. A loader would fetch them when its wait window
// expires, and a level whose keys take longer than the window to add (a
// busy machine, the race detector) would split into several batches: a
// cost in round trips that depends on timing. So the read-ahead fetches a
// level here instead: one store call for the keys not yet read, at once,
// whose results prime the loader the resolvers then read from.

// FetchLists reads the pages of lists at once (zero pages where a key
// failed: its resolver meets the error when it loads the key itself).
func (l *Loaders) FetchLists(ctx context.Context, keys []readplan.ListKey) []readplan.ListPage {
	out, _ := l.lists.fetch(ctx, keys)
	return out
}

// FetchUserPages reads pages of users' own posts at once (nil where a key
// failed).
func (l *Loaders) FetchUserPages(ctx context.Context, keys []readplan.UserPageKey) []*readplan.Page {
	out, _ := l.userPages.fetch(ctx, keys)
	return out
}

// FetchDetails reads users with what their keys want at once, as Details
// would (priming Users, UserCounts and Relations); nil for missing users,
// and the error of a read that failed.
func (l *Loaders) FetchDetails(ctx context.Context, keys []UserKey) ([]*social.User, error) {
	return l.details.fetch(ctx, keys)
}

// FetchPosts reads posts as the viewer may see them at once (nil for
// missing or hidden ones).
func (l *Loaders) FetchPosts(ctx context.Context, ids []string) []*social.Post {
	out, _ := l.posts.fetch(ctx, ids)
	return out
}

// eager fetches keys of one loader at once and primes it with the results.
// It remembers what it read, so a level read again (by a resolver below
// that reads ahead for its own objects) costs nothing.
type eager[K comparable, V any] struct {
	loader *dataloadgen.Loader[K, V]
	batch  func(context.Context, []K) ([]V, []error)

	mu  sync.Mutex
	got map[K]V
}

func newEager[K comparable, V any](l *dataloadgen.Loader[K, V], batch func(context.Context, []K) ([]V, []error)) *eager[K, V] {
	return &eager[K, V]{loader: l, batch: batch, got: map[K]V{}}
}

func (e *eager[K, V]) fetch(ctx context.Context, keys []K) ([]V, error) {
	out := make([]V, len(keys))
	var missing []K
	e.mu.Lock()
	seen := make(map[K]bool)
	for i, k := range keys {
		if v, ok := e.got[k]; ok {
			out[i] = v
		} else if !seen[k] {
			seen[k] = true
			missing = append(missing, k)
		}
	}
	e.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	vs, errs := e.batch(ctx, missing)
	read := make(map[K]V, len(missing))
	var failed error
	for i, k := range missing {
		if err := batchErr(errs, i, len(missing)); err != nil || i >= len(vs) {
			if failed == nil {
				failed = err
			}
			continue
		}
		read[k] = vs[i]
		e.loader.Prime(k, vs[i])
	}
	e.mu.Lock()
	for k, v := range read {
		e.got[k] = v
	}
	e.mu.Unlock()
	for i, k := range keys {
		if v, ok := read[k]; ok {
			out[i] = v
		}
	}
	return out, failed
}

// batchErr is key i's error in a batch result: one error for all, or one
// per key.
func batchErr(errs []error, i, n int) error {
	switch {
	case len(errs) == 1 && n != 1:
		return errs[0]
	case i < len(errs):
		return errs[i]
	}
	return nil
}

// PrimeList records a list page read with something else (a post's first
// comments, read with its timeline page).
func (l *Loaders) PrimeList(k readplan.ListKey, page readplan.ListPage) { l.lists.prime(k, page) }

// PrimePost records a post read with a page (nil: deleted or hidden).
func (l *Loaders) PrimePost(id string, p *social.Post) { l.posts.prime(id, p) }

// PrimeUserPage records a page of a user's posts read directly.
func (l *Loaders) PrimeUserPage(k readplan.UserPageKey, page *readplan.Page) {
	l.userPages.prime(k, page)
}

func (e *eager[K, V]) prime(k K, v V) {
	e.loader.Prime(k, v)
	e.mu.Lock()
	if _, ok := e.got[k]; !ok {
		e.got[k] = v
	}
	e.mu.Unlock()
}
