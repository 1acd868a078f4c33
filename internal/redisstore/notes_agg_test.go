package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// takeJobs removes the queued fan-out jobs from the queue and returns
// them, oldest first, for a test to run itself.
func takeJobs(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) []map[string]string {
	t.Helper()
	ctx := context.Background()
	var out []map[string]string
	for i := range redisstore.DefaultFanoutShards {
		key := s.Keys().FanoutShard(i)
		msgs, err := rdb.XRange(ctx, key, "-", "+").Result()
		feedOK(t, err)
		for _, m := range msgs {
			job := map[string]string{}
			for k, v := range m.Values {
				job[k] = fmt.Sprint(v)
			}
			out = append(out, job)
			feedOK(t, rdb.XDel(ctx, key, m.ID).Err())
		}
	}
	return out
}

// TestAggregatedNotesFromSource: a notification of likes keeps no actors;
// its actors and count are read from the post's likers. Jobs run in
// reverse order still count every like, run again they raise nothing, a
// mute leaves the muted liker out, and the notification goes with its last
// like.
func TestAggregatedNotesFromSource(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 21)
	owner, fans := u[0], u[1:]
	p := feedPost(t, s, owner, social.NewPost{}).ID
	drain(t, w)
	for _, f := range fans {
		feedOK(t, s.Like(ctx, f, p))
	}
	jobs := takeJobs(t, s, rdb)
	slices.Reverse(jobs)
	for _, j := range jobs {
		feedOK(t, s.HandleFanoutJob(ctx, j))
	}
	newest := func() int64 {
		n, err := s.NewestNotification(ctx, owner)
		feedOK(t, err)
		return n
	}
	top, err := rdb.ZRevRange(ctx, s.Keys().Likers(p), 0, 2).Result()
	feedOK(t, err)
	check := func(what string, count int, actors []string) {
		t.Helper()
		page, err := s.Notifications(ctx, owner, social.PageRequest{First: 5}, 3)
		feedOK(t, err)
		if count == 0 {
			if len(page.Items) != 0 {
				t.Fatalf("%s: %+v, want none", what, page.Items)
			}
			return
		}
		if len(page.Items) != 1 || page.Items[0].ActorsCount != count || !slices.Equal(page.Items[0].Actors, actors) {
			t.Fatalf("%s: %+v, want %d actors, first %v", what, page.Items, count, actors)
		}
	}
	check("jobs in reverse order", len(fans), top)
	if n := rdb.HLen(ctx, s.Keys().NoteOpen(owner)).Val(); n != 2 {
		t.Fatalf("noteopen holds %d fields, want the group and its windows", n)
	}

	raised := newest()
	for _, j := range jobs {
		feedOK(t, s.HandleFanoutJob(ctx, j))
	}
	if got := newest(); got != raised {
		t.Fatalf("jobs run again raised the notification from %d to %d", raised, got)
	}

	newestFan := fans[slices.Index(fans, top[0])]
	feedOK(t, s.Mute(ctx, owner, newestFan))
	drain(t, w)
	top2, err := rdb.ZRevRange(ctx, s.Keys().Likers(p), 1, 3).Result()
	feedOK(t, err)
	check("a liker muted", len(fans)-1, top2)

	for _, f := range fans {
		feedOK(t, s.Unlike(ctx, f, p))
	}
	drain(t, w)
	check("every like undone", 0, nil)
	if n := rdb.HLen(ctx, s.Keys().NoteOpen(owner)).Val(); n != 0 {
		t.Fatalf("noteopen holds %d fields after the notification went", n)
	}
}

// TestNotesPageSkipsEmptyWindows: an aggregated notification whose last
// like is undone, its job not yet run, is left out of pages and live
// reads, and as many more are read in its place, so that hasNext and a
// live stream's catch-up still see the ones after it.
func TestNotesPageSkipsEmptyWindows(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	owner, fan := u[0], u[1]
	var posts []string
	for range 3 {
		p := feedPost(t, s, owner, social.NewPost{}).ID
		feedOK(t, s.Like(ctx, fan, p))
		drain(t, w)
		posts = append(posts, p)
	}
	feedOK(t, s.Unlike(ctx, fan, posts[1]))
	takeJobs(t, s, rdb) // the unlike's job has not run

	ids := func(notes []*social.Notification) []string {
		var out []string
		for _, n := range notes {
			out = append(out, n.PostID)
		}
		return out
	}
	page, err := s.Notifications(ctx, owner, social.PageRequest{First: 1}, 1)
	feedOK(t, err)
	if got := ids(page.Items); !slices.Equal(got, []string{posts[2]}) || !page.HasNext {
		t.Fatalf("first page %v (hasNext %v), want %v and more", got, page.HasNext, posts[2:])
	}
	next, err := s.Notifications(ctx, owner, social.PageRequest{First: 1, After: page.EndCursor()}, 1)
	feedOK(t, err)
	if got := ids(next.Items); !slices.Equal(got, []string{posts[0]}) || next.HasNext {
		t.Fatalf("second page %v (hasNext %v), want %v and no more", got, next.HasNext, posts[:1])
	}
	live, err := s.NotificationsAfter(ctx, owner, 0, 2, 1)
	feedOK(t, err)
	if got := ids(live); !slices.Equal(got, []string{posts[0], posts[2]}) {
		t.Fatalf("live read %v, want %v", got, []string{posts[0], posts[2]})
	}
}

// TestNotesPageRoundTrips: a page of notifications costs the page script
// and, as it holds notifications read from their source, one pipeline for
// all of their counts and actors: two round trips, whatever first.
func TestNotesPageRoundTrips(t *testing.T) {
	s, w, cnt, u := tripStore(t, 4)
	ctx := context.Background()
	owner, fans := u[0], u[1:]
	for range 25 {
		p := feedPost(t, s, owner, social.NewPost{}).ID
		for _, f := range fans {
			feedOK(t, s.Like(ctx, f, p))
		}
	}
	p := feedPost(t, s, owner, social.NewPost{}).ID
	_, err := s.AddComment(ctx, fans[0], p, "hi")
	feedOK(t, err)
	drain(t, w)
	feedOK(t, s.LoadScripts(ctx))
	for _, tc := range []struct {
		first int
		want  int64
	}{{1, 2}, {5, 2}, {20, 2}} {
		var page social.Notifications
		trips := cnt.trips(t, func() (err error) {
			page, err = s.Notifications(ctx, owner, social.PageRequest{First: tc.first}, 3)
			return err
		})
		if len(page.Items) != tc.first || trips != tc.want {
			t.Errorf("first %d: %d notifications in %d round trips, want %d", tc.first, len(page.Items), trips, tc.want)
		}
	}
}

// TestAggregatedNotesConcurrentJobs: likes and unlikes of one post, their
// jobs run twice each, in a shuffled order, by four goroutines at once:
// the notification ends with exactly the likes that stand, or is gone
// when none does.
func TestAggregatedNotesConcurrentJobs(t *testing.T) {
	s, rdb := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 31)
	owner, fans := u[0], u[1:]
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 4 {
		p := feedPost(t, s, owner, social.NewPost{}).ID
		takeJobs(t, s, rdb)
		for range 120 {
			f := fans[rng.IntN(len(fans))]
			if rng.IntN(3) > 0 || round == 3 {
				feedOK(t, s.Unlike(ctx, f, p))
			} else {
				feedOK(t, s.Like(ctx, f, p))
			}
		}
		jobs := takeJobs(t, s, rdb)
		jobs = append(jobs, jobs...)
		rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
		next := make(chan map[string]string)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for j := range next {
					if err := s.HandleFanoutJob(ctx, j); err != nil {
						t.Error(err)
					}
				}
			})
		}
		for _, j := range jobs {
			next <- j
		}
		close(next)
		wg.Wait()
		likers := int(rdb.ZCard(ctx, s.Keys().Likers(p)).Val())
		page, err := s.Notifications(ctx, owner, social.PageRequest{First: 10}, 3)
		feedOK(t, err)
		var got []*social.Notification
		for _, n := range page.Items {
			if n.PostID == p {
				got = append(got, n)
			}
		}
		switch {
		case likers == 0 && len(got) != 0:
			t.Fatalf("round %d: no like stands, yet %+v", round, got[0])
		case likers > 0 && (len(got) != 1 || got[0].ActorsCount != likers):
			t.Fatalf("round %d: %d likes stand, notifications %+v", round, likers, got)
		}
		if likers == 0 {
			if kept := rdb.HMGet(ctx, s.Keys().NoteOpen(owner), "like:"+p, "w|like:"+p).Val(); kept[0] != nil || kept[1] != nil {
				t.Fatalf("round %d: noteopen keeps %v", round, kept)
			}
		}
	}
}

// TestNotesManyMutes: a recipient who muted more users than the reads
// list (noteExcludedCap of each set) is still never shown one of them
// among a notification's actors.
func TestNotesManyMutes(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	owner, fan, muted := u[0], u[1], u[2]
	mutes := []any{muted}
	for i := range 3 * redisstore.NoteExcludedCap {
		mutes = append(mutes, fmt.Sprint(900000000+i))
	}
	feedOK(t, rdb.SAdd(ctx, s.Keys().Mutes(owner), mutes...).Err())
	p := feedPost(t, s, owner, social.NewPost{}).ID
	feedOK(t, s.Like(ctx, fan, p))
	feedOK(t, s.Like(ctx, muted, p))
	drain(t, w)
	for range 10 { // each read lists another third of the mutes
		page, err := s.Notifications(ctx, owner, social.PageRequest{First: 5}, 3)
		feedOK(t, err)
		if len(page.Items) != 1 || !slices.Equal(page.Items[0].Actors, []string{fan}) {
			var shown [][]string
			for _, n := range page.Items {
				shown = append(shown, n.Actors)
			}
			t.Fatalf("actors shown %v, want [[%s]]", shown, fan)
		}
	}
}
