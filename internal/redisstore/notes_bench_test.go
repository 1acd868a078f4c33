package redisstore_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// BenchmarkLikeStorm likes one post by 10 000 users (16 at a time), then
// drains the 10 000 note jobs with one worker: the time and Redis CPU the
// drain takes, how many notifications the author has (one, aggregated),
// and the Redis memory of the author's notification keys against that of
// the post's likers.
func BenchmarkLikeStorm(b *testing.B) {
	const likers = 10_000
	s, rdb := feedStore(b)
	ctx := context.Background()
	u := feedUsers(b, s, likers+1)
	owner := u[0]
	w := feedWorker(b, s, rdb)
	for b.Loop() {
		post := feedPost(b, s, owner, social.NewPost{}).ID
		start := time.Now()
		var wg sync.WaitGroup
		next := make(chan string)
		for range 16 {
			wg.Go(func() {
				for a := range next {
					feedOK(b, s.Like(ctx, a, post))
				}
			})
		}
		for _, a := range u[1:] {
			next <- a
		}
		close(next)
		wg.Wait()
		liked := time.Since(start)
		cpu := redisCPU(b, rdb)
		start = time.Now()
		n, err := w.Drain(ctx)
		feedOK(b, err)
		drained := time.Since(start)
		cpu = redisCPU(b, rdb) - cpu
		if n < likers {
			b.Fatalf("drained %d jobs, want %d", n, likers)
		}
		k := s.Keys()
		notes, err := rdb.ZRange(ctx, k.Notes(owner), 0, -1).Result()
		feedOK(b, err)
		if len(notes) != 1 {
			b.Fatalf("%d notifications, want one", len(notes))
		}
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
		noteMem := mem(k.Notes(owner), k.NoteData(owner), k.NoteOpen(owner), k.NoteMeta(owner), k.NoteActors(owner, notes[0]))
		b.ReportMetric(liked.Seconds(), "s-to-like")
		b.ReportMetric(drained.Seconds(), "s-to-drain")
		b.ReportMetric(cpu, "redis-cpu-s-drain")
		b.ReportMetric(float64(len(notes)), "notifications")
		b.ReportMetric(noteMem/1e6, "notes-MB")
		b.ReportMetric(noteMem/likers, "notes-B/actor")
		b.ReportMetric(mem(k.Likers(post))/likers, "likers-B/actor")
	}
}
