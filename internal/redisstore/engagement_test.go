package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// engagementFixture is a store with an author, a stranger and posts.
type engagementFixture struct {
	s                  *redisstore.Store
	rdb                redis.UniversalClient
	prefix             string
	author, fan, other string
	public             string // a public post by author
}

func newEngagementFixture(t *testing.T) *engagementFixture {
	t.Helper()
	f := &engagementFixture{rdb: redistest.Client(t), prefix: redistest.Prefix(t)}
	f.s = redisstore.New(f.rdb, f.prefix)
	// The post cache on: every engagement and layout test reads through it.
	f.s.CachePosts(1000)
	f.author = engUser(t, f.s, "author")
	f.fan = engUser(t, f.s, "fan")
	f.other = engUser(t, f.s, "other")
	f.public = engPost(t, f.s, f.author, social.NewPost{Content: "hello"})
	return f
}

var engUserSeq atomic.Int64

func engUser(t *testing.T, s *redisstore.Store, name string) string {
	t.Helper()
	name = fmt.Sprintf("%s_%d", name, engUserSeq.Add(1))
	u, err := s.CreateUser(context.Background(), social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "x"})
	if err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
	return u.ID
}

func engPost(t *testing.T, s *redisstore.Store, author string, in social.NewPost) string {
	t.Helper()
	p, err := s.CreatePost(context.Background(), author, in)
	if err != nil {
		t.Fatalf("create post: %v", err)
	}
	return p.ID
}

func wantEngCode(t *testing.T, what string, err error, code social.Code) {
	t.Helper()
	if got := social.ErrorCode(err); got != code {
		t.Fatalf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func engLikes(t *testing.T, s *redisstore.Store, post string) int {
	t.Helper()
	c, err := s.Likers(context.Background(), post, social.PageRequest{First: 1})
	if err != nil {
		t.Fatalf("likers: %v", err)
	}
	return c.Total
}

func TestLikeRules(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	hidden := engPost(t, f.s, f.author, social.NewPost{Content: "just for fan", OnlyTo: []string{f.fan}})
	deleted := engPost(t, f.s, f.author, social.NewPost{Content: "gone soon"})
	if err := f.s.DeletePost(ctx, f.author, deleted); err != nil {
		t.Fatal(err)
	}
	blocker := engUser(t, f.s, "blocker")
	blockersPost := engPost(t, f.s, blocker, social.NewPost{Content: "no blocked users here"})
	if err := f.s.Block(ctx, blocker, f.fan); err != nil {
		t.Fatal(err)
	}
	blocked := engUser(t, f.s, "blocked")
	blockedsPost := engPost(t, f.s, blocked, social.NewPost{Content: "fan blocked me"})
	if err := f.s.Block(ctx, f.fan, blocked); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		op        func(ctx context.Context, viewerID, postID string) error
		viewer    string
		post      string
		code      social.Code
		wantLikes int
	}{
		{"like a public post", f.s.Like, f.fan, f.public, "", 1},
		{"like it again", f.s.Like, f.fan, f.public, "", 1},
		{"author likes own post", f.s.Like, f.author, f.public, "", 2},
		{"unlike", f.s.Unlike, f.author, f.public, "", 1},
		{"unlike again", f.s.Unlike, f.author, f.public, "", 1},
		{"like a post shown to the viewer", f.s.Like, f.fan, hidden, "", 1},
		{"like a post hidden from the viewer", f.s.Like, f.other, hidden, social.NotFound, 1},
		{"unlike a post hidden from the viewer", f.s.Unlike, f.other, hidden, social.NotFound, 1},
		{"like a missing post", f.s.Like, f.fan, "999999", social.NotFound, 0},
		{"like a malformed post id", f.s.Like, f.fan, "x}y", social.NotFound, 0},
		{"like a deleted post", f.s.Like, f.fan, deleted, social.NotFound, 0},
		{"like when blocked by the author", f.s.Like, f.fan, blockersPost, social.NotFound, 0},
		{"like a post of a user the viewer blocked", f.s.Like, f.fan, blockedsPost, social.NotFound, 0},
		{"others may still like the blocker's post", f.s.Like, f.other, blockersPost, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantEngCode(t, tt.name, tt.op(ctx, tt.viewer, tt.post), tt.code)
			if got := engLikes(t, f.s, tt.post); got != tt.wantLikes {
				t.Errorf("likes = %d, want %d", got, tt.wantLikes)
			}
		})
	}

	marks, err := f.s.Marks(ctx, f.fan, []string{f.public, hidden, blockersPost, "999999"})
	if err != nil {
		t.Fatal(err)
	}
	liked := make([]bool, len(marks))
	for i, m := range marks {
		liked[i] = m.Liked
	}
	if want := []bool{true, true, false, false}; !slices.Equal(liked, want) {
		t.Errorf("Liked = %v, want %v", liked, want)
	}
}

// engParallel runs n calls of fn on a bounded pool of goroutines and returns
// the first error.
func engParallel(n, workers int, fn func(i int) error) error {
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		next     = make(chan int)
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { firstErr = err })
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return firstErr
}

func TestLikeConcurrency(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	tests := []struct {
		name  string
		calls int
		user  func(i int) string
		want  int
	}{
		// Synthetic ids: likes do not require the liker's hash, and 1 000
		// real accounts would cost more than they show.
		{"1000 distinct users at once", 1000, func(i int) string { return strconv.Itoa(1_000_000 + i) }, 1000},
		{"one user 50 times at once", 50, func(int) string { return f.fan }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			post := engPost(t, f.s, f.author, social.NewPost{Content: tt.name})
			err := engParallel(tt.calls, 32, func(i int) error { return f.s.Like(ctx, tt.user(i), post) })
			if err != nil {
				t.Fatal(err)
			}
			if got := engLikes(t, f.s, post); got != tt.want {
				t.Errorf("likes = %d, want %d", got, tt.want)
			}
		})
	}
}

// engDoubler makes every command run twice, as go-redis does when it retries
// a command whose reply was lost: the first run's effects stay, and the
// caller sees the second run's reply.
type engDoubler struct{}

func (engDoubler) DialHook(next redis.DialHook) redis.DialHook { return next }
func (engDoubler) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := next(ctx, cmd); err != nil {
			return err
		}
		return next(ctx, cmd)
	}
}
func (engDoubler) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func TestEngagementRetrySafety(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	twice := redistest.Client(t)
	twice.AddHook(engDoubler{})
	s := redisstore.New(twice, f.prefix)

	if err := s.Like(ctx, f.fan, f.public); err != nil {
		t.Fatalf("like: %v", err)
	}
	if got := engLikes(t, f.s, f.public); got != 1 {
		t.Errorf("likes after a retried like = %d, want 1", got)
	}
	c, err := s.AddComment(ctx, f.fan, f.public, "once")
	if err != nil {
		t.Fatalf("add comment: %v", err)
	}
	page, err := f.s.PostComments(ctx, f.public, social.PageRequest{First: 10})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 1 || !slices.Equal(page.Items, []string{c.ID}) {
		t.Errorf("comments after a retried add = %v (total %d), want [%s]", page.Items, page.Total, c.ID)
	}
	if err := s.DeleteComment(ctx, f.fan, c.ID); err != nil {
		t.Fatalf("retried delete: %v", err)
	}
	page, err = f.s.PostComments(ctx, f.public, social.PageRequest{First: 10})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 0 {
		t.Errorf("comments after delete = %v", page.Items)
	}
	if err := s.Unlike(ctx, f.fan, f.public); err != nil {
		t.Fatalf("unlike: %v", err)
	}
	if got := engLikes(t, f.s, f.public); got != 0 {
		t.Errorf("likes after a retried unlike = %d, want 0", got)
	}
}

// engBeforeScripts runs fn before every script the client sends, alone or
// in a pipeline.
type engBeforeScripts struct{ fn func() }

func (engBeforeScripts) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h engBeforeScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			h.fn()
		}
		return next(ctx, cmd)
	}
}
func (h engBeforeScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if n := cmd.Name(); n == "evalsha" || n == "eval" {
				h.fn()
				break
			}
		}
		return next(ctx, cmds)
	}
}

func TestEngagementRacingPostDeletion(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		op   func(s *redisstore.Store, post string) error
	}{
		{"like", func(s *redisstore.Store, post string) error { return s.Like(ctx, "4000000", post) }},
		{"comment", func(s *redisstore.Store, post string) error {
			_, err := s.AddComment(ctx, "4000000", post, "late")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newEngagementFixture(t)
			k := f.s.Keys()
			// The post's hash goes after the visibility check passed and
			// before the write: the write must notice, in the same step.
			racing := redistest.Client(t)
			racing.AddHook(engBeforeScripts{fn: func() { f.rdb.Del(ctx, k.Post(f.public)) }})
			wantEngCode(t, tt.name, tt.op(redisstore.New(racing, f.prefix), f.public), social.NotFound)

			n, err := f.rdb.Exists(ctx, k.Likers(f.public), k.PostComments(f.public)).Result()
			if err != nil || n != 0 {
				t.Errorf("%d engagement keys written for a deleted post (%v)", n, err)
			}
			if seq, _ := f.rdb.Get(ctx, k.CommentSeq()).Result(); seq != "" {
				if ok, _ := f.rdb.HExists(ctx, k.CommentPost(seq), seq).Result(); ok {
					t.Errorf("index entry of comment %s left behind", seq)
				}
			}
		})
	}
}

func TestAddCommentRules(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	stranger := engUser(t, f.s, "stranger")
	hidden := engPost(t, f.s, f.author, social.NewPost{Content: "not for stranger", NotTo: []string{stranger}})
	deleted := engPost(t, f.s, f.author, social.NewPost{Content: "gone soon"})
	if err := f.s.DeletePost(ctx, f.author, deleted); err != nil {
		t.Fatal(err)
	}
	if err := f.s.Block(ctx, f.author, f.other); err != nil {
		t.Fatal(err)
	}
	otherPost := engPost(t, f.s, f.other, social.NewPost{Content: "by other"})

	tests := []struct {
		name        string
		viewer      string
		post        string
		content     string
		code        social.Code
		wantContent string
	}{
		{"plain", f.fan, f.public, "nice", "", "nice"},
		{"trimmed", f.fan, f.public, "  \n spaced\t ", "", "spaced"},
		{"1000 characters of two bytes", f.fan, f.public, strings.Repeat("é", 1000), "", strings.Repeat("é", 1000)},
		{"1001 characters", f.fan, f.public, strings.Repeat("é", 1001), social.BadUserInput, ""},
		{"empty", f.fan, f.public, "", social.BadUserInput, ""},
		{"only spaces", f.fan, f.public, " \n\t ", social.BadUserInput, ""},
		{"invalid UTF-8", f.fan, f.public, "a\xffb", social.BadUserInput, ""},
		{"post hidden from the viewer", stranger, hidden, "hi", social.NotFound, ""},
		{"post hidden from someone else", f.fan, hidden, "hi", "", "hi"},
		{"missing post", f.fan, "999999", "hi", social.NotFound, ""},
		{"deleted post", f.fan, deleted, "hi", social.NotFound, ""},
		{"blocked by the post's author", f.other, f.public, "hi", social.NotFound, ""},
		{"on a post of a user the viewer blocked", f.author, otherPost, "hi", social.NotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := f.s.PostComments(ctx, tt.post, social.PageRequest{First: 1})
			if err != nil {
				t.Fatal(err)
			}
			c, err := f.s.AddComment(ctx, tt.viewer, tt.post, tt.content)
			wantEngCode(t, "add comment", err, tt.code)
			after, err := f.s.PostComments(ctx, tt.post, social.PageRequest{First: 1})
			if err != nil {
				t.Fatal(err)
			}
			if tt.code != "" {
				if after.Total != before.Total {
					t.Errorf("a refused comment changed the count: %d → %d", before.Total, after.Total)
				}
				return
			}
			if after.Total != before.Total+1 || after.Items[0] != c.ID {
				t.Errorf("comments after add: %v (total %d → %d), want %s first", after.Items, before.Total, after.Total, c.ID)
			}
			got, err := f.s.Comments(ctx, []string{c.ID})
			if err != nil {
				t.Fatal(err)
			}
			want := &social.Comment{ID: c.ID, PostID: tt.post, AuthorID: tt.viewer, Content: tt.wantContent, CreatedAt: c.CreatedAt}
			if got[0] == nil || *got[0] != *want || *c != *want {
				t.Errorf("stored %+v, returned %+v, want %+v", got[0], c, want)
			}
		})
	}
}

func TestDeleteCommentRules(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	secret := engPost(t, f.s, f.author, social.NewPost{Content: "fan only", OnlyTo: []string{f.fan}})
	add := func(viewer, post string) string {
		t.Helper()
		c, err := f.s.AddComment(ctx, viewer, post, "to delete")
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	byFan := add(f.fan, f.public)
	byFan2 := add(f.fan, f.public)
	byFanOnSecret := add(f.fan, secret)
	byOther := add(f.other, f.public)

	tests := []struct {
		name     string
		viewer   string
		comment  string
		code     social.Code
		wantGone bool // the comment does not exist afterwards
	}{
		{"by a stranger", f.other, byFan, social.Forbidden, false},
		{"by a stranger who may not see the post", f.other, byFanOnSecret, social.NotFound, false},
		{"by the comment's author", f.fan, byFan, "", true},
		{"again, after the index is gone", f.fan, byFan, social.NotFound, true},
		{"by the post's author", f.author, byFan2, "", true},
		{"by the post's author, someone else's comment", f.author, byOther, "", true},
		{"by its author, on a post hidden from others", f.fan, byFanOnSecret, "", true},
		{"unknown id", f.fan, "999999", social.NotFound, true},
		{"malformed id", f.fan, "1}x", social.NotFound, true},
		{"empty id", f.fan, "", social.NotFound, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantEngCode(t, "delete", f.s.DeleteComment(ctx, tt.viewer, tt.comment), tt.code)
			got, err := f.s.Comments(ctx, []string{tt.comment})
			if err != nil {
				t.Fatal(err)
			}
			if gone := got[0] == nil; gone != tt.wantGone {
				t.Errorf("comment gone = %v, want %v", gone, tt.wantGone)
			}
		})
	}
	page, err := f.s.PostComments(ctx, f.public, social.PageRequest{First: 10})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 0 || len(page.Items) != 0 {
		t.Errorf("comments left on the post: %v (total %d)", page.Items, page.Total)
	}
}

func TestCommentsLoad(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	c, err := f.s.AddComment(ctx, f.fan, f.public, "x")
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.s.Comments(ctx, []string{"999999", c.ID, "abc", "", "0", c.ID})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, true, false, false, false, true} {
		if (got[i] != nil) != want {
			t.Errorf("Comments[%d] = %+v, want present %v", i, got[i], want)
		}
	}
}

// engCollect pages through a list until the end and returns every id.
func engCollect(t *testing.T, list func(social.PageRequest) (social.Connection[string], error), first int, between func(page int, last string)) []string {
	t.Helper()
	var all []string
	p := social.PageRequest{First: first}
	for page := 0; ; page++ {
		c, err := list(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Items) > first {
			t.Fatalf("page of %d items, asked for %d", len(c.Items), first)
		}
		all = append(all, c.Items...)
		if !c.HasNext {
			return all
		}
		p.After = c.Cursors[len(c.Cursors)-1]
		if between != nil {
			between(page, c.Items[len(c.Items)-1])
		}
	}
}

// engWithout returns ids minus the gone ones, in order.
func engWithout(ids []string, gone map[string]bool) []string {
	var out []string
	for _, id := range ids {
		if !gone[id] {
			out = append(out, id)
		}
	}
	return out
}

func TestPostCommentsPaging(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	var ids []string // newest first
	for i := 0; i < 30; i++ {
		c, err := f.s.AddComment(ctx, f.fan, f.public, fmt.Sprintf("c%d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{c.ID}, ids...)
	}
	list := func(p social.PageRequest) (social.Connection[string], error) {
		return f.s.PostComments(ctx, f.public, p)
	}

	t.Run("quiet", func(t *testing.T) {
		if got := engCollect(t, list, 7, nil); !slices.Equal(got, ids) {
			t.Errorf("pages = %v, want %v", got, ids)
		}
	})

	t.Run("while comments come and go", func(t *testing.T) {
		// Between pages a newer comment arrives (it belongs before the
		// reader's position, so on no later page), one not read yet goes,
		// and on every other page the cursor's own comment goes too. The
		// reader must see every other comment once, in order.
		gone := map[string]bool{}
		got := engCollect(t, list, 7, func(page int, last string) {
			if _, err := f.s.AddComment(ctx, f.other, f.public, "late"); err != nil {
				t.Fatal(err)
			}
			if page%2 == 0 {
				if err := f.s.DeleteComment(ctx, f.fan, last); err != nil {
					t.Fatal(err)
				}
			}
			if i := slices.Index(ids, last) + 3; i < len(ids) && !gone[ids[i]] {
				if err := f.s.DeleteComment(ctx, f.fan, ids[i]); err != nil {
					t.Fatal(err)
				}
				gone[ids[i]] = true
			}
		})
		if want := engWithout(ids, gone); !slices.Equal(got, want) {
			t.Errorf("pages = %v, want %v", got, want)
		}
	})

	t.Run("malformed cursors", func(t *testing.T) {
		for _, after := range []string{"garbage", social.EncodeCursor("abc"), social.EncodeCursor("1", "2"), social.EncodeCursor("0"), social.EncodeCursor("-3")} {
			_, err := f.s.PostComments(ctx, f.public, social.PageRequest{First: 5, After: after})
			wantEngCode(t, after, err, social.BadUserInput)
		}
	})
}

func TestPostCommentsConcurrentAdds(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	const n = 200
	// Ids are handed out before the list insert, so concurrent comments
	// reach the list out of order; it must still come out sorted, newest
	// first, each id once.
	err := engParallel(n, 16, func(i int) error {
		_, err := f.s.AddComment(ctx, f.fan, f.public, strconv.Itoa(i))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.s.PostComments(ctx, f.public, social.PageRequest{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != n {
		t.Errorf("total = %d, want %d", c.Total, n)
	}
	all, err := f.rdb.LRange(ctx, f.s.Keys().PostComments(f.public), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	nums := make([]int, len(all))
	for i, id := range all {
		nums[i], _ = strconv.Atoi(id)
	}
	if !slices.IsSortedFunc(nums, func(a, b int) int { return b - a }) || len(slices.Compact(slices.Clone(nums))) != n {
		t.Errorf("list not strictly newest first: %v", nums)
	}
}

func TestLikersPaging(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	// Synthetic likers; many share a millisecond, so ties in the score are
	// exercised as well.
	for i := 0; i < 40; i++ {
		if err := f.s.Like(ctx, strconv.Itoa(2_000_000+i), f.public); err != nil {
			t.Fatal(err)
		}
	}
	list := func(p social.PageRequest) (social.Connection[string], error) {
		return f.s.Likers(ctx, f.public, p)
	}
	all := engCollect(t, list, 100, nil)
	if len(all) != 40 {
		t.Fatalf("likers = %d, want 40", len(all))
	}

	t.Run("quiet", func(t *testing.T) {
		if got := engCollect(t, list, 6, nil); !slices.Equal(got, all) {
			t.Errorf("pages = %v, want %v", got, all)
		}
	})

	t.Run("while likes come and go", func(t *testing.T) {
		// Between pages a new like arrives (newer than the reader's
		// position), one liker not read yet unlikes, and the cursor's own
		// liker stays, unlikes, or unlikes and likes again (which moves
		// them to the top) in turn.
		gone := map[string]bool{}
		got := engCollect(t, list, 6, func(page int, last string) {
			if err := f.s.Like(ctx, strconv.Itoa(3_000_000+page), f.public); err != nil {
				t.Fatal(err)
			}
			if page%3 > 0 {
				if err := f.s.Unlike(ctx, last, f.public); err != nil {
					t.Fatal(err)
				}
			}
			if page%3 == 2 {
				if err := f.s.Like(ctx, last, f.public); err != nil {
					t.Fatal(err)
				}
			}
			if i := slices.Index(all, last) + 2; i < len(all) && !gone[all[i]] {
				if err := f.s.Unlike(ctx, all[i], f.public); err != nil {
					t.Fatal(err)
				}
				gone[all[i]] = true
			}
		})
		if want := engWithout(all, gone); !slices.Equal(got, want) {
			t.Errorf("pages = %v, want %v", got, want)
		}
	})

	t.Run("malformed cursors", func(t *testing.T) {
		for _, after := range []string{"garbage", social.EncodeCursor("abc", "1"), social.EncodeCursor("1")} {
			_, err := f.s.Likers(ctx, f.public, social.PageRequest{First: 5, After: after})
			wantEngCode(t, after, err, social.BadUserInput)
		}
	})
}

// engDrainFanout carries out every job queued on the fan-out stream, as
// the worker would (jobs are idempotent, so earlier ones may run again).
func engDrainFanout(t *testing.T, f *engagementFixture) {
	t.Helper()
	ctx := context.Background()
	msgs, err := f.rdb.XRange(ctx, f.s.Keys().FanoutStream(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		job := make(map[string]string, len(m.Values))
		for k, v := range m.Values {
			job[k], _ = v.(string)
		}
		if err := f.s.HandleFanoutJob(ctx, job); err != nil {
			t.Fatalf("fan-out job %v: %v", job, err)
		}
	}
}

func TestDeletePostRemovesEngagement(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	if err := f.s.Like(ctx, f.fan, f.public); err != nil {
		t.Fatal(err)
	}
	var comments []string
	for i := 0; i < 3; i++ {
		c, err := f.s.AddComment(ctx, f.fan, f.public, "bye")
		if err != nil {
			t.Fatal(err)
		}
		comments = append(comments, c.ID)
	}
	if err := f.s.DeletePost(ctx, f.author, f.public); err != nil {
		t.Fatal(err)
	}

	// At once, before the cleanup job ran: the post hash is gone, so
	// nothing more can be added to it, and its comments can not be
	// deleted one by one (they go with the post).
	wantEngCode(t, "like", f.s.Like(ctx, f.other, f.public), social.NotFound)
	_, err := f.s.AddComment(ctx, f.other, f.public, "late")
	wantEngCode(t, "comment", err, social.NotFound)
	wantEngCode(t, "delete comment", f.s.DeleteComment(ctx, f.fan, comments[0]), social.NotFound)

	engDrainFanout(t, f)
	got, err := f.s.Comments(ctx, comments)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got {
		if c != nil {
			t.Errorf("comment %s survived its post", comments[i])
		}
	}
	k := f.s.Keys()
	keys := []string{k.Likers(f.public), k.PostComments(f.public)}
	for _, id := range comments {
		keys = append(keys, k.PostComment(f.public, id))
	}
	if n, err := f.rdb.Exists(ctx, keys...).Result(); err != nil || n != 0 {
		t.Errorf("%d of the post's engagement keys left (%v)", n, err)
	}
	for _, id := range comments {
		if n, err := f.rdb.HExists(ctx, k.CommentPost(id), id).Result(); err != nil || n {
			t.Errorf("index entry of comment %s left (%v)", id, err)
		}
	}
}
