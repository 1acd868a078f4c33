package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// purgeFiles records what the purge asks the blob store to delete (the
// blob store itself has its own tests against a real S3 API).
type purgeFiles struct {
	mu       sync.Mutex
	deleted  []string
	profiles []string
}

func (f *purgeFiles) Delete(_ context.Context, keys []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, keys...)
	return nil
}

func (f *purgeFiles) DeleteProfileFiles(_ context.Context, userID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profiles = append(f.profiles, userID)
	return nil
}

// keyspace is every key under a prefix with a readable form of its
// content (members, fields and values sorted), on every master.
func keyspace(tb testing.TB, rdb redis.UniversalClient, prefix string) map[string]string {
	tb.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, k := range redistest.Keys(tb, rdb, prefix+"*") {
		typ, err := rdb.Type(ctx, k).Result()
		if err != nil {
			tb.Fatal(err)
		}
		var parts []string
		switch typ {
		case "string":
			parts = []string{rdb.Get(ctx, k).Val()}
		case "hash":
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				parts = append(parts, f+"="+v)
			}
			sort.Strings(parts)
		case "set":
			parts = rdb.SMembers(ctx, k).Val()
			sort.Strings(parts)
		case "zset":
			for _, z := range rdb.ZRangeWithScores(ctx, k, 0, -1).Val() {
				parts = append(parts, fmt.Sprint(z.Member)+"@"+strconv.FormatFloat(z.Score, 'f', -1, 64))
			}
		case "list":
			parts = rdb.LRange(ctx, k, 0, -1).Val()
		case "stream":
			parts = []string{"stream"} // the queues: their entries are acknowledged and deleted
		}
		out[strings.TrimPrefix(k, prefix)] = typ + ":" + strings.Join(parts, "\n")
	}
	return out
}

// purgeLeftovers are the keys an account's life may leave, as
// docs/data-model.md ("Account deletion") lists them: id counters,
// queues, hashtag trend counters, other users' notification counters and
// read marks. None may name the account or what it made.
var purgeLeftovers = regexp.MustCompile(`^(\{acct\}:seq:user|\{seq\}:(post|comment|list)|\{(fanout|mail)\d*\}:.*|t:\{t\w+\}:h:\d+:(users|uses)|\{trend\}:tags|u:\{u\d+\}:(notemeta|homemark))$`)

// life gives user a a life touching b, c and d, and returns every id it
// made or that should go with it (posts, comments, lists).
type life struct {
	a     string
	name  string
	ids   []string // what must leave no trace
	media []string // file keys of a's posts
	keep  string   // b's answer to a's comment, which stays
	kept  *regexp.Regexp
}

func liveALife(t *testing.T, s *redisstore.Store, w *fanout.Worker, b, c, d, bPost, bOwn string) *life {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Ids of their own range, so that a leftover is told from an older
	// key's content.
	rdb := s.Client()
	k := s.Keys()
	must(rdb.Set(ctx, k.UserSeq(), 700000, 0).Err())
	must(rdb.Set(ctx, k.PostSeq(), 800000, 0).Err())
	must(rdb.Set(ctx, k.CommentSeq(), 900000, 0).Err())
	must(rdb.Set(ctx, k.ListSeq(), 600000, 0).Err())

	name := "gone_" + strconv.Itoa(int(time.Now().UnixNano()%1e6))
	u, err := s.CreateUser(ctx, social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "x"})
	must(err)
	a := u.ID
	l := &life{a: a, name: name, ids: []string{a}}
	add := func(id string) string { l.ids = append(l.ids, id); return id }

	dn := "Gone Person"
	must(s.IndexDisplayName(ctx, a, "", dn))
	_, err = redisstore.NewProfileService(s.DB).UpdateProfile(ctx, a, social.ProfileUpdate{DisplayName: &dn, Avatar: &social.ProfileImage{
		ID: "pic1", Original: social.ImageFile{MIME: "image/png", Bytes: 10, Width: 1, Height: 1, Key: "profile/" + a + "/pic1/orig"}}})
	must(err)
	must(s.CreateSession(ctx, "sess"+a, a, "h", "key", time.Hour))
	mails := redisstore.NewMailService(s.DB)
	must(mails.SaveMailToken(ctx, social.TokenVerify, a, social.MailToken{Hash: "h", Email: name + "@example.com", Expires: time.Now().Add(time.Hour)}))

	// Follows both ways, a mute, a block by d.
	must(s.Follow(ctx, a, b))
	must(s.Follow(ctx, b, a))
	must(s.Follow(ctx, c, a))
	must(s.Mute(ctx, a, c))
	must(s.Block(ctx, d, a))

	// Posts: with media, a hashtag, a mention, one only to b, a plain
	// repost of b's; b's plain repost of a's.
	media := []social.Media{{ID: "m1", Kind: social.Image, MIME: "image/png", Bytes: 10, Width: 1, Height: 1, Key: "media/" + a + "-1-m1"}}
	bu, err := s.User(ctx, b)
	must(err)
	p1 := feedPost(t, s, a, social.NewPost{Content: "hello #purgetag @" + bu.Name, Media: media})
	add(p1.ID)
	l.media = append(l.media, media[0].Key)
	p2 := feedPost(t, s, a, social.NewPost{Content: "just for b", OnlyTo: []string{b}})
	add(p2.ID)
	rp, err := s.CreatePost(ctx, a, social.NewPost{RepostOf: bPost})
	must(err)
	add(rp.ID)
	brp, err := s.CreatePost(ctx, b, social.NewPost{RepostOf: p1.ID})
	must(err)
	add(brp.ID)
	drain(t, w)

	// Likes and comments both ways, answers both ways, and on its own.
	must(s.Like(ctx, a, p1.ID))
	own, err := s.AddComment(ctx, a, p1.ID, "a on a")
	must(err)
	add(own.ID)
	must(s.Like(ctx, a, bPost))
	must(s.Like(ctx, b, p1.ID))
	ac, err := s.AddComment(ctx, a, bPost, "a on b")
	must(err)
	add(ac.ID)
	bc, err := s.AddComment(ctx, b, p1.ID, "b on a")
	must(err)
	add(bc.ID)
	aAns, err := s.AddReply(ctx, a, bPost, "a answers b", bOwn)
	must(err)
	add(aAns.ID)
	bAns, err := s.AddReply(ctx, b, bPost, "b answers a", ac.ID)
	must(err)
	// b's answer stays (its hash, and its entries in the post's list,
	// the comment index and b's index): it keeps the id of the comment it
	// answered, which reads null, but not a's.
	l.keep = bAns.ID
	l.ids = slices.DeleteFunc(l.ids, func(id string) bool { return id == ac.ID })
	l.kept = regexp.MustCompile(`^(p:\{p` + bPost + `\}:(c:` + bAns.ID + `|comments)|u:\{u` + b + `\}:commented|ci:\{ci\d+\})$`)

	// Curation: lists both ways, bookmarks both ways, a pin.
	al, err := s.CreateList(ctx, a, "a's list")
	must(err)
	add(al.ID)
	_, err = s.AddToList(ctx, a, al.ID, []string{b})
	must(err)
	cls, err := s.Lists(ctx, c)
	must(err)
	_, err = s.AddToList(ctx, c, cls[0].ID, []string{a})
	must(err)
	must(s.Bookmark(ctx, a, bPost))
	must(s.Bookmark(ctx, b, p1.ID))
	must(s.Pin(ctx, a, p1.ID))
	// Locked last: its flag must go with the purge too.
	lockAccount(t, s, a, true)
	drain(t, w)
	return l
}

// purgeWorld makes b, c and d with a post of b's, and a worker.
func purgeWorld(t *testing.T) (s *redisstore.Store, w *fanout.Worker, files *purgeFiles, b, c, d, bPost, bOwn string) {
	t.Helper()
	s, rdb := feedStore(t)
	files = &purgeFiles{}
	s.SetFiles(files)
	w = feedWorker(t, s, rdb)
	us := feedUsers(t, s, 3)
	b, c, d = us[0], us[1], us[2]
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Follow(context.Background(), c, b))
	var cl *social.List
	bPost = feedPost(t, s, b, social.NewPost{Content: "b's #purgetag post"}).ID
	own, err := s.AddComment(context.Background(), b, bPost, "b on b")
	must(err)
	bOwn = own.ID
	cl, err = s.CreateList(context.Background(), c, "c's list")
	must(err)
	_, err = s.AddToList(context.Background(), c, cl.ID, []string{b})
	must(err)
	drain(t, w)
	return s, w, files, b, c, d, bPost, bOwn
}

// checkPurged compares the keyspace after the purge with before: no key
// but the allowed leftovers is new or gone, and no key names the account
// or anything it made.
func checkPurged(t *testing.T, before, after map[string]string, l *life) {
	t.Helper()
	forbidden := map[string]bool{l.name: true, strings.ToLower(l.name): true}
	for _, id := range l.ids {
		forbidden[id] = true
	}
	split := regexp.MustCompile(`[^A-Za-z0-9_]+`)
	for key, v := range after {
		if purgeLeftovers.MatchString(key) {
			continue // counters and queues
		}
		if _, ok := before[key]; !ok && (l.kept == nil || !l.kept.MatchString(key)) {
			t.Errorf("new key %s = %q", key, v)
			continue
		}
		for _, tok := range split.Split(key+" "+v, -1) {
			if forbidden[tok] {
				t.Errorf("key %s names %q: %q", key, tok, v)
				break
			}
		}
	}
	for key := range before {
		if _, ok := after[key]; !ok && !strings.Contains(key, ":v") {
			t.Errorf("key %s is gone", key)
		}
	}
}

// purgeCase is a world, the keyspace before the account, and the
// account's life.
type purgeCase struct {
	s      *redisstore.Store
	w      *fanout.Worker
	files  *purgeFiles
	rdb    redis.UniversalClient
	before map[string]string
	l      *life
	b, c   string
	bPost  string
}

func newPurgeCase(t *testing.T) *purgeCase {
	t.Helper()
	s, w, files, b, c, d, bPost, bOwn := purgeWorld(t)
	pc := &purgeCase{s: s, w: w, files: files, rdb: s.Client(), b: b, c: c, bPost: bPost}
	pc.before = keyspace(t, pc.rdb, s.Keys().Prefix())
	pc.l = liveALife(t, s, w, b, c, d, bPost, bOwn)
	return pc
}

// check drains the queue and compares the keyspace with the one before.
func (pc *purgeCase) check(t *testing.T) {
	t.Helper()
	drain(t, pc.w)
	drain(t, pc.w) // the jobs the purge queued (notifications, others' reposts)
	checkPurged(t, pc.before, keyspace(t, pc.rdb, pc.s.Keys().Prefix()), pc.l)
}

// TestDeleteAccountPurge: an account with a realistic life is hidden at
// once by DeleteAccount, and its purge (the fan-out job) leaves nothing
// of it; its name and address register again.
func TestDeleteAccountPurge(t *testing.T) {
	ctx := context.Background()
	pc := newPurgeCase(t)
	s, files, b, c, l, bPost := pc.s, pc.files, pc.b, pc.c, pc.l, pc.bPost

	if err := s.DeleteAccount(ctx, l.a); err != nil {
		t.Fatal(err)
	}
	// At once: no user, no login, no posts, for everyone.
	if _, err := s.User(ctx, l.a); !social.IsCode(err, social.NotFound) {
		t.Errorf("user after delete: %v", err)
	}
	if _, _, err := s.Credentials(ctx, l.name); !social.IsCode(err, social.NotFound) {
		t.Errorf("login after delete: %v", err)
	}
	for _, viewer := range []string{"", b, c} {
		posts, err := s.VisiblePosts(ctx, viewer, l.ids[1:5])
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range posts {
			if p != nil {
				t.Errorf("viewer %q sees post %s of the deleted account", viewer, l.ids[1+i])
			}
		}
	}
	home, err := homeIDs(ctx, s, c, social.PageRequest{First: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range home.Items {
		if slices.Contains(l.ids, id) {
			t.Errorf("c's home shows %s of the deleted account", id)
		}
	}
	// Its comments went with the mutation.
	if cs, err := s.PostCommentsPage(ctx, bPost, social.PageRequest{First: 20}); err != nil {
		t.Fatal(err)
	} else {
		for _, cm := range cs.Items {
			if cm.AuthorID == l.a {
				t.Errorf("b's post still shows comment %s of the deleted account", cm.ID)
			}
		}
	}
	// The name stays taken until the purge ends.
	if _, err := s.CreateUser(ctx, social.NewAccount{Name: l.name, Email: "other@example.com", PasswordHash: "x"}); !social.IsCode(err, social.Conflict) {
		t.Errorf("register the name during the purge: %v", err)
	}
	if err := s.DeleteAccount(ctx, l.a); err != nil {
		t.Errorf("delete again: %v", err)
	}

	pc.check(t)
	// b's answer to a's comment stays, naming no one.
	if cs, err := s.Comments(ctx, []string{l.keep}); err != nil || cs[0] == nil {
		t.Errorf("b's answer: %v %v", cs, err)
	}
	files.mu.Lock()
	for _, m := range l.media {
		if !slices.Contains(files.deleted, m) {
			t.Errorf("media file %s not deleted", m)
		}
	}
	if !slices.Contains(files.profiles, l.a) {
		t.Errorf("profile pictures of %s not deleted", l.a)
	}
	files.mu.Unlock()

	// The name and the address are free again.
	u, err := s.CreateUser(ctx, social.NewAccount{Name: l.name, Email: l.name + "@example.com", PasswordHash: "x"})
	if err != nil {
		t.Fatalf("register the freed name: %v", err)
	}
	if u.ID == l.a {
		t.Fatal("an id was reused")
	}
}

// TestDeleteAccountResumes: a purge stopped between batches (its worker
// gone: the job stays pending, its lease expires) is finished by the
// next delivery, with the same end.
func TestDeleteAccountResumes(t *testing.T) {
	ctx := context.Background()
	pc := newPurgeCase(t)
	s, w, rdb, l := pc.s, pc.w, pc.rdb, pc.l
	// More posts and followers, so that stages take several batches.
	for i := range 60 {
		l.ids = append(l.ids, feedPost(t, s, l.a, social.NewPost{Content: "post " + strconv.Itoa(i)}).ID)
	}
	drain(t, w)
	if err := s.DeleteAccount(ctx, l.a); err != nil {
		t.Fatal(err)
	}
	job, err := rdb.XRange(ctx, s.Keys().FanoutStream(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var purge map[string]string
	for _, e := range job {
		if e.Values["op"] == "purge" {
			purge = map[string]string{}
			for k, v := range e.Values {
				purge[k] = fmt.Sprint(v)
			}
		}
	}
	if purge == nil {
		t.Fatal("no purge job queued")
	}
	// Run it directly, stopping it after the first batch of posts: a
	// worker killed there.
	var stages []string
	stopCtx, stop := context.WithCancel(ctx)
	s.AfterPurgeBatch(func(stage string) {
		stages = append(stages, stage)
		if stage == "posts" {
			stop()
		}
	})
	if err := s.HandleFanoutJob(stopCtx, purge); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped purge: %v", err)
	}
	if !slices.Contains(stages, "posts") || slices.Contains(stages, "followers") {
		t.Fatalf("stages before the stop: %v", stages)
	}
	left, err := rdb.ZCard(ctx, s.Keys().UserPosts(l.a)).Result()
	if err != nil || left == 0 {
		t.Fatalf("posts left after the stop: %d %v", left, err)
	}
	// The next delivery resumes at the posts stage (the lease was given
	// back by the stopped run; a killed one's expires).
	stages = nil
	s.AfterPurgeBatch(func(stage string) { stages = append(stages, stage) })
	if err := s.HandleFanoutJob(ctx, purge); err != nil {
		t.Fatal(err)
	}
	if stages[0] != "posts" {
		t.Errorf("resumed at %s, want posts", stages[0])
	}
	s.AfterPurgeBatch(nil)
	pc.check(t)
}

// TestDeleteAccountContinues: a purge longer than one delivery's slice
// queues its continuation each time, and the worker's deliveries finish
// it.
func TestDeleteAccountContinues(t *testing.T) {
	ctx := context.Background()
	pc := newPurgeCase(t)
	s, w, l := pc.s, pc.w, pc.l
	s.SetPurgeSlice(time.Nanosecond) // one batch a delivery
	batches := 0
	s.AfterPurgeBatch(func(string) { batches++ })
	if err := s.DeleteAccount(ctx, l.a); err != nil {
		t.Fatal(err)
	}
	pc.check(t)
	if st := w.Stats(); batches < len(redisstore.PurgeStages()) || st.Processed < int64(batches) {
		t.Errorf("%d batches in %d jobs: the purge did not go on in continuations", batches, st.Processed)
	}
}
