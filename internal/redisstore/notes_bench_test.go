package redisstore_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// BenchmarkLikeRequestPath times Like, as likePost's request path runs it
// (a visibility read, then the like script pipelined with its note job),
// against the same without the note job (LikeWithoutNote): what
// notifications add to a like. Each like is by another user of 2 000, on
// one post, the two taking turns (each first every other time); p50 and
// p99 per like.
func BenchmarkLikeRequestPath(b *testing.B) {
	s, _ := feedStore(b)
	ctx := context.Background()
	u := feedUsers(b, s, 2001)
	post := feedPost(b, s, u[0], social.NewPost{}).ID
	likers := u[1:]
	ways := []struct {
		name string
		like func(ctx context.Context, viewer, post string) error
	}{{"with note job", s.Like}, {"without note job", s.LikeWithoutNote}}
	times := make([][]time.Duration, len(ways))
	i := 0
	for b.Loop() {
		for j := range ways {
			w := (i + j) % len(ways) // each goes first every other time
			way := ways[w]
			a := likers[i%len(likers)]
			start := time.Now()
			feedOK(b, way.like(ctx, a, post))
			times[w] = append(times[w], time.Since(start))
			feedOK(b, s.Unlike(ctx, a, post))
		}
		i++
	}
	for w, way := range ways {
		slices.Sort(times[w])
		tag := strings.ReplaceAll(way.name, " ", "-")
		b.ReportMetric(float64(times[w][len(times[w])/2].Nanoseconds())/1e3, "p50-µs-"+tag)
		b.ReportMetric(float64(times[w][len(times[w])*99/100].Nanoseconds())/1e3, "p99-µs-"+tag)
	}
}

// BenchmarkLikeStorm likes one post by 10 000 users (16 at a time) in two
// halves, and after each drains the 5 000 note jobs with one worker: the
// time and Redis CPU each drain takes, how many notifications the author
// has (one, aggregated), and the Redis memory of the author's
// notification keys after each half against that of the post's likers.
// Flat: the second half costs what the first did, per job and in memory.
func BenchmarkLikeStorm(b *testing.B) {
	const likers = 10_000
	s, rdb := feedStore(b)
	ctx := context.Background()
	u := feedUsers(b, s, likers+1)
	owner := u[0]
	w := feedWorker(b, s, rdb)
	k := s.Keys()
	mem := func(keys ...string) float64 {
		total := 0.0
		for _, key := range keys {
			n, err := rdb.MemoryUsage(ctx, key, 0).Result()
			if err != nil && err != redis.Nil {
				b.Fatal(err)
			}
			total += float64(n)
		}
		return total
	}
	noteMem := func() float64 {
		notes, err := rdb.ZRange(ctx, k.Notes(owner), 0, -1).Result()
		feedOK(b, err)
		if len(notes) != 1 {
			b.Fatalf("%d notifications, want one", len(notes))
		}
		return mem(k.Notes(owner), k.NoteData(owner), k.NoteOpen(owner), k.NoteMeta(owner), k.NoteActors(owner, notes[0]))
	}
	for b.Loop() {
		post := feedPost(b, s, owner, social.NewPost{}).ID
		var liked, drained time.Duration
		var cpu [2]float64
		var notes [2]float64
		for half, group := range [][]string{u[1 : 1+likers/2], u[1+likers/2:]} {
			start := time.Now()
			likeAll(b, s, post, group)
			liked += time.Since(start)
			c := redisCPU(b, rdb)
			start = time.Now()
			n, err := w.Drain(ctx)
			feedOK(b, err)
			drained += time.Since(start)
			cpu[half] = redisCPU(b, rdb) - c
			if n < len(group) {
				b.Fatalf("drained %d jobs, want %d", n, len(group))
			}
			notes[half] = noteMem()
		}
		page, err := s.Notifications(ctx, owner, social.PageRequest{First: 1}, 3)
		feedOK(b, err)
		if len(page.Items) != 1 || page.Items[0].ActorsCount != likers || len(page.Items[0].Actors) != 3 {
			b.Fatalf("after the storm: %+v", page.Items)
		}
		b.ReportMetric(liked.Seconds(), "s-to-like")
		b.ReportMetric(drained.Seconds(), "s-to-drain")
		b.ReportMetric(cpu[0]+cpu[1], "redis-cpu-s-drain")
		b.ReportMetric(cpu[0]/(likers/2)*1e6, "redis-cpu-µs/job-1st-half")
		b.ReportMetric(cpu[1]/(likers/2)*1e6, "redis-cpu-µs/job-2nd-half")
		b.ReportMetric(notes[0], "notes-B-1st-half")
		b.ReportMetric(notes[1], "notes-B-2nd-half")
		b.ReportMetric(notes[1]/likers, "notes-B/actor")
		b.ReportMetric(mem(k.Likers(post))/likers, "likers-B/actor")
	}
}

// likeAll likes post by each of users, 16 at a time.
func likeAll(b *testing.B, s *redisstore.Store, post string, users []string) {
	ctx := context.Background()
	var wg sync.WaitGroup
	next := make(chan string)
	for range 16 {
		wg.Go(func() {
			for a := range next {
				feedOK(b, s.Like(ctx, a, post))
			}
		})
	}
	for _, a := range users {
		next <- a
	}
	close(next)
	wg.Wait()
}
