package redisstore_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// The layout a page reads a post with: its newest comments packed in the
// post hash (cm) and the viewer's flags in PostViewers, and the migration
// of posts written before either existed.

// evalCounter counts the script calls (EVALSHA and EVAL) sent.
// evalCounter counts the scripts called on posts' keys (comments,
// counters), not those reading a user's timeline.
type evalCounter struct{ n atomic.Int64 }

func (c *evalCounter) count(cmds []redis.Cmder) {
	for _, cmd := range cmds {
		n, args := cmd.Name(), cmd.Args()
		if (n == "evalsha" || n == "eval") && len(args) > 3 && strings.Contains(fmt.Sprint(args[3]), "{p") {
			c.n.Add(1)
		}
	}
}
func (c *evalCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *evalCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.count([]redis.Cmder{cmd}); return next(ctx, cmd) }
}
func (c *evalCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.count(cmds); return next(ctx, cmds) }
}

// layoutPage reads the author's timeline as viewer with marks and the
// first comments, as the reference page asks.
func layoutPage(t *testing.T, f *engagementFixture, viewer string, first int) *readplan.Page {
	t.Helper()
	page, err := f.s.UserPage(context.Background(), viewer, f.author, social.PageRequest{First: 10},
		readplan.PageWants{Counts: true, Marks: true, Comments: first, Reposts: true, OriginalMarks: true})
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// wantSameComments fails unless a page's first comments of post are what
// PostCommentsPage pages.
func wantSameComments(t *testing.T, f *engagementFixture, page *readplan.Page, post string, first int, what string) {
	t.Helper()
	want, err := f.s.PostCommentsPage(context.Background(), post, social.PageRequest{First: first})
	if err != nil {
		t.Fatal(err)
	}
	if got := page.Comments[post]; !reflect.DeepEqual(got, want) {
		t.Errorf("%s, first %d: page's comments\n%s\nwant\n%s", what, first, fmtComments(got), fmtComments(want))
	}
}

func fmtComments(c social.Connection[*social.Comment]) string {
	s := fmt.Sprintf("total %d next %v cursors %v:", c.Total, c.HasNext, c.Cursors)
	for _, cm := range c.Items {
		s += fmt.Sprintf(" {%s %s %q %v}", cm.ID, cm.AuthorID, cm.Content, cm.CreatedAt)
	}
	return s
}

// TestPagePackedComments: after every add and delete, a page's first
// comments of a post (up to 3, read from the packed cm with the post) are
// what PostCommentsPage pages, contents with spaces, digits, newlines and
// multi-byte characters included; the page calls no script for them, and
// a page asking for more than the hash packs gets the same from the
// comment script.
func TestPagePackedComments(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	evals := &evalCounter{}
	f.rdb.AddHook(evals)
	contents := []string{"plain", "1 2 3 4", "new\nline", "é—ü 🙂", "a  b ", "12 34 5 6 7 8 9", "last"}
	var ids []string
	check := func(what string) {
		t.Helper()
		for first := 1; first <= 5; first++ {
			before := evals.n.Load()
			page := layoutPage(t, f, f.fan, first)
			if n := evals.n.Load() - before; first < 4 && n != 0 {
				t.Errorf("%s, first %d: the page called %d scripts", what, first, n)
			}
			wantSameComments(t, f, page, f.public, first, what)
		}
	}
	check("no comments")
	for i, c := range contents {
		cm, err := f.s.AddComment(ctx, []string{f.fan, f.other}[i%2], f.public, c)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cm.ID)
		check(fmt.Sprintf("%d comments", i+1))
	}
	for _, i := range []int{6, 2, 0, 5, 4, 3, 1} { // the newest, one in the middle, ... all
		feedOK(t, f.s.DeleteComment(ctx, f.author, ids[i]))
		check("deleted " + ids[i])
	}
}

// TestPageViewerFlags: a page's marks of a post and of a repost's original
// follow likes, unlikes, plain reposts and their deletion as the Marks
// batch read (Likers, PostPlainReposts) has them.
func TestPageViewerFlags(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	// The author's own repost brings public back as an original.
	repost := engPost(t, f.s, f.author, social.NewPost{RepostOf: f.public, Content: "again"})
	var mine string
	steps := []struct {
		name string
		do   func() error
		want social.Marks
	}{
		{"nothing", func() error { return nil }, social.Marks{}},
		{"like", func() error { return f.s.Like(ctx, f.fan, f.public) }, social.Marks{Liked: true}},
		{"other's like", func() error { return f.s.Like(ctx, f.other, f.public) }, social.Marks{Liked: true}},
		{"plain repost", func() error {
			p, err := f.s.CreatePost(ctx, f.fan, social.NewPost{RepostOf: f.public})
			if p != nil {
				mine = p.ID
			}
			return err
		}, social.Marks{Liked: true, Reposted: true}},
		{"unlike", func() error { return f.s.Unlike(ctx, f.fan, f.public) }, social.Marks{Reposted: true}},
		{"repost deleted", func() error {
			if err := f.s.DeletePost(ctx, f.fan, mine); err != nil {
				return err
			}
			engDrainFanout(t, f)
			return nil
		}, social.Marks{}},
		{"like again", func() error { return f.s.Like(ctx, f.fan, f.public) }, social.Marks{Liked: true}},
	}
	for _, st := range steps {
		feedOK(t, st.do())
		batch, err := f.s.Marks(ctx, f.fan, []string{f.public})
		if err != nil {
			t.Fatal(err)
		}
		if batch[0] != st.want {
			t.Fatalf("%s: Marks %+v, want %+v", st.name, batch[0], st.want)
		}
		page := layoutPage(t, f, f.fan, 0)
		if got := page.Marks[f.public]; got != st.want {
			t.Errorf("%s: page marks %+v, want %+v", st.name, got, st.want)
		}
		if page.Originals[f.public] == nil {
			t.Fatalf("%s: repost %s has no original on the page", st.name, repost)
		}
		if anon := layoutPage(t, f, "", 0); anon.Marks[f.public] != (social.Marks{}) {
			t.Errorf("%s: anonymous marks %+v", st.name, anon.Marks[f.public])
		}
	}
}

// audienceFix is an author's ONLY_TO and NOT_TO posts, both naming member,
// and an outsider named by neither.
type audienceFix struct {
	*engagementFixture
	only, not, member, outsider string
}

func newAudienceFix(t *testing.T) *audienceFix {
	t.Helper()
	f := &audienceFix{engagementFixture: newEngagementFixture(t)}
	f.member, f.outsider = f.fan, f.other
	f.only = engPost(t, f.s, f.author, social.NewPost{Content: "only", OnlyTo: []string{f.member}})
	f.not = engPost(t, f.s, f.author, social.NewPost{Content: "not", NotTo: []string{f.member}})
	return f
}

// wantVisible fails unless each viewer sees exactly the posts want names
// among only, not and public, on a page and through VisiblePosts.
func (f *audienceFix) wantVisible(t *testing.T, what string) {
	t.Helper()
	ctx := context.Background()
	for _, c := range []struct {
		viewer string
		want   []string
	}{
		{f.member, []string{f.only, f.public}},
		{f.outsider, []string{f.not, f.public}},
		{"", []string{f.public}},
		{f.author, []string{f.not, f.only, f.public}},
	} {
		var got []string
		for _, p := range layoutPage(t, f.engagementFixture, c.viewer, 3).Posts.Items {
			got = append(got, p.ID)
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: viewer %q sees %v on a page, want %v", what, c.viewer, got, c.want)
		}
		posts, err := f.s.VisiblePosts(ctx, c.viewer, []string{f.only, f.not, f.public})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, p := range posts {
			if p != nil {
				got = append(got, p.ID)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: viewer %q sees %v through VisiblePosts, want %v", what, c.viewer, got, c.want)
		}
	}
}

// TestAudienceFlags: ONLY_TO and NOT_TO posts are seen by exactly whom
// their audience lets see them, anonymous viewers seeing neither.
func TestAudienceFlags(t *testing.T) {
	newAudienceFix(t).wantVisible(t, "new layout")
}

// oldLayout turns posts into what the version before PostViewers and cm
// wrote: the same keys without PostViewers, and hashes without pv and cm.
func oldLayout(t *testing.T, f *engagementFixture, posts ...string) {
	t.Helper()
	ctx, k := context.Background(), f.s.Keys()
	for _, p := range posts {
		feedOK(t, f.rdb.HDel(ctx, k.Post(p), "pv", "cm").Err())
		feedOK(t, f.rdb.Del(ctx, k.PostViewers(p)).Err())
	}
}

// TestOldLayoutMigrates: posts written before PostViewers and cm (likes,
// a plain repost, comments, both audiences) read the same through the
// new code: visibility, marks and first comments; the first signed-in
// read writes pv, PostViewers and cm, and the writers keep them from
// then on, also when one of them ran before the migration.
func TestOldLayoutMigrates(t *testing.T) {
	ctx := context.Background()
	f := newAudienceFix(t)
	k := f.s.Keys()
	feedOK(t, f.s.Like(ctx, f.member, f.only))
	feedOK(t, f.s.Like(ctx, f.member, f.public))
	feedOK(t, f.s.Like(ctx, f.outsider, f.public))
	repost := engPost(t, f.s, f.member, social.NewPost{RepostOf: f.public})
	for _, c := range []string{"one", "two 2", "three\n3", "four", "five"} {
		if _, err := f.s.AddComment(ctx, f.outsider, f.public, c); err != nil {
			t.Fatal(err)
		}
	}
	// Likes written directly, as many as take more than one HSET to
	// migrate.
	var direct []redis.Z
	for i := range 700 {
		direct = append(direct, redis.Z{Score: float64(1_700_000_000_000 + i), Member: strconv.Itoa(2_000_000 + i)})
	}
	feedOK(t, f.rdb.ZAdd(ctx, k.Likers(f.public), direct...).Err())
	oldLayout(t, f.engagementFixture, f.only, f.not, f.public)
	// A writer of the new version before any read: its flag is rebuilt
	// from what it mirrors.
	feedOK(t, f.s.Unlike(ctx, f.outsider, f.public))

	f.wantVisible(t, "old layout")
	for _, p := range []string{f.only, f.not, f.public} {
		if pv, _ := f.rdb.HGet(ctx, k.Post(p), "pv").Result(); pv != "1" {
			t.Errorf("post %s: pv %q after the first reads", p, pv)
		}
	}
	wantFlags := map[string]map[string]string{
		f.only:   {f.member: "al"},
		f.not:    {f.member: "a"},
		f.public: {f.member: "lr"},
	}
	for p, want := range wantFlags {
		got, err := f.rdb.HGetAll(ctx, k.PostViewers(p)).Result()
		if err != nil {
			t.Fatal(err)
		}
		for u, fl := range got {
			b := []byte(fl)
			slices.Sort(b)
			got[u] = string(b)
		}
		if p == f.public {
			for _, z := range direct {
				if u := z.Member.(string); got[u] == "l" {
					delete(got, u)
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("post %s: PostViewers %v, want %v", p, got, want)
		}
	}
	for round := range 2 { // cm written by the first page, read by the second
		page := layoutPage(t, f.engagementFixture, f.member, 3)
		if got, want := page.Marks[f.public], (social.Marks{Liked: true, Reposted: true}); got != want {
			t.Errorf("round %d: marks %+v, want %+v", round, got, want)
		}
		wantSameComments(t, f.engagementFixture, page, f.public, 3, fmt.Sprintf("round %d", round))
	}
	if n, _ := f.rdb.HExists(ctx, k.Post(f.public), "cm").Result(); !n {
		t.Error("no cm after a page read the comments")
	}
	// The writers keep the migrated layout.
	feedOK(t, f.s.DeletePost(ctx, f.member, repost))
	engDrainFanout(t, f.engagementFixture)
	feedOK(t, f.s.Unlike(ctx, f.member, f.public))
	if got := layoutPage(t, f.engagementFixture, f.member, 3).Marks[f.public]; got != (social.Marks{}) {
		t.Errorf("after unlike and unrepost: marks %+v", got)
	}
	f.wantVisible(t, "migrated")
}

// TestLargeAudienceFlags: an audience larger than one HSET writes has
// every member's flag.
func TestLargeAudienceFlags(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	var audience []string
	for i := range 600 { // users as their profile hash makes them exist
		u := strconv.Itoa(3_000_000 + i)
		feedOK(t, f.rdb.HSet(ctx, f.s.Keys().User(u), "name", "u"+u).Err())
		audience = append(audience, u)
	}
	audience = append(audience, f.fan)
	only := engPost(t, f.s, f.author, social.NewPost{Content: "many", OnlyTo: audience})
	if n := f.rdb.HLen(ctx, f.s.Keys().PostViewers(only)).Val(); n != int64(len(audience)) {
		t.Errorf("PostViewers holds %d users, want %d", n, len(audience))
	}
	posts, err := f.s.VisiblePosts(ctx, f.fan, []string{only})
	if err != nil || posts[0] == nil {
		t.Errorf("the last member does not see the post: %v", err)
	}
	posts, err = f.s.VisiblePosts(ctx, f.other, []string{only})
	if err != nil || posts[0] != nil {
		t.Errorf("an outsider sees the post: %v", err)
	}
}

// TestDeletePostRemovesViewers: a deleted post's PostViewers goes with
// it, and an old-layout post deleted is not brought back by a read.
func TestDeletePostRemovesViewers(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	k := f.s.Keys()
	old := engPost(t, f.s, f.author, social.NewPost{Content: "old"})
	feedOK(t, f.s.Like(ctx, f.fan, f.public))
	feedOK(t, f.s.Like(ctx, f.fan, old))
	oldLayout(t, f, old)
	if n := f.rdb.Exists(ctx, k.PostViewers(f.public)).Val(); n != 1 {
		t.Fatal("no PostViewers after a like")
	}
	for _, p := range []string{f.public, old} {
		feedOK(t, f.s.DeletePost(ctx, f.author, p))
	}
	engDrainFanout(t, f)
	posts, err := f.s.VisiblePosts(ctx, f.fan, []string{f.public, old})
	if err != nil || posts[0] != nil || posts[1] != nil {
		t.Fatalf("deleted posts: %v, %v", posts, err)
	}
	if n := f.rdb.Exists(ctx, k.Post(f.public), k.PostViewers(f.public), k.Post(old), k.PostViewers(old)).Val(); n != 0 {
		t.Errorf("%d keys of the deleted posts are left", n)
	}
}
