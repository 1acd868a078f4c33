package redisstore_test

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// BenchmarkPurgeAccount deletes an account with PURGE_FOLLOWERS
// followers (default 10 000) and PURGE_POSTS posts (default 1 000), each
// follower's home list holding PURGE_HOME of its posts (default 20), and
// reports how long the purge took (purge-s), the peak Go heap in use
// above the level before it (peak-heap-MiB: the worker's own memory) and
// the p50 of another client's home page read before (p50-before-µs) and
// during (p50-during-µs) the purge. docs/performance-accounts.md ("Deleting an
// account") has the figures of
//
//	PURGE_FOLLOWERS=100000 PURGE_POSTS=10000 go test -run '^$' -bench PurgeAccount -benchtime 1x ./internal/redisstore
//
// Followers, their follows and home lists are written straight into
// Redis (pipelines of 1 000); the posts through CreatePost, before the
// followers exist, so their fan-out costs nothing.
func BenchmarkPurgeAccount(b *testing.B) {
	followers := envInt("PURGE_FOLLOWERS", 10_000)
	posts := envInt("PURGE_POSTS", 1_000)
	home := envInt("PURGE_HOME", 20)
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		s, rdb := feedStore(b)
		w := feedWorker(b, s, rdb)
		us := feedUsers(b, s, 3)
		a, reader, other := us[0], us[1], us[2]
		if err := s.Follow(ctx, reader, other); err != nil {
			b.Fatal(err)
		}
		for i := range 50 {
			feedPost(b, s, other, social.NewPost{Content: "other " + strconv.Itoa(i)})
		}
		ids := make([]string, posts)
		var wg sync.WaitGroup
		var next atomic.Int64
		for range 8 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < posts; i = int(next.Add(1)) - 1 {
					ids[i] = feedPost(b, s, a, social.NewPost{Content: "post " + strconv.Itoa(i) + " #purgebench"}).ID
				}
			})
		}
		wg.Wait()
		drain(b, w)
		seedFollowers(b, rdb, s.Keys(), a, ids, followers, home)
		b.Logf("seeded %d followers, %d posts, %d home entries each", followers, posts, home)

		// Another client's page, before and during the purge.
		page := func() time.Duration {
			start := time.Now()
			if _, err := s.HomePage(ctx, reader, social.PageRequest{First: 20}, readplan.PageWants{Authors: true, Counts: true, Marks: true, Comments: 3, CommentAuthors: true, Reposts: true, OriginalAuthors: true}); err != nil {
				b.Error(err)
			}
			return time.Since(start)
		}
		// The same paced loop before the purge (after a warm-up) as
		// during it.
		for range 50 {
			page()
		}
		var baseline []time.Duration
		for until := time.Now().Add(3 * time.Second); time.Now().Before(until); {
			baseline = append(baseline, page())
			time.Sleep(2 * time.Millisecond)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		var peak atomic.Uint64
		done := make(chan struct{})
		var during []time.Duration
		var bg sync.WaitGroup
		bg.Go(func() {
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					if m.HeapInuse > peak.Load() {
						peak.Store(m.HeapInuse)
					}
				}
			}
		})
		bg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					during = append(during, page())
					time.Sleep(2 * time.Millisecond)
				}
			}
		})

		b.StartTimer()
		start := time.Now()
		if err := s.DeleteAccount(ctx, a); err != nil {
			b.Fatal(err)
		}
		for {
			drain(b, w)
			if n, _ := rdb.SIsMember(ctx, s.Keys().Deleting(), a).Result(); !n {
				break
			}
		}
		took := time.Since(start)
		b.StopTimer()
		close(done)
		bg.Wait()
		b.ReportMetric(took.Seconds(), "purge-s")
		b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(p50(baseline).Microseconds()), "p50-before-µs")
		b.ReportMetric(float64(p50(during).Microseconds()), "p50-during-µs")
		b.ReportMetric(float64(pct(during, 0.9).Microseconds()), "p90-during-µs")
		b.ReportMetric(float64(pct(baseline, 0.9).Microseconds()), "p90-before-µs")
		b.Logf("%d reads before, %d during the purge", len(baseline), len(during))
		if n := len(redistest.Keys(b, rdb, s.Keys().Prefix()+"u:{u"+a+"}*")); n != 0 {
			b.Fatalf("%d keys of the account left", n)
		}
	}
}

// seedFollowers makes n followers of a (ids of their own, no profile:
// the purge reads none) whose home lists hold the newest home of a's
// posts.
func seedFollowers(b *testing.B, rdb redis.UniversalClient, k redisstore.Keys, a string, posts []string, n, home int) {
	ctx := context.Background()
	sorted := slices.Clone(posts)
	slices.SortFunc(sorted, func(x, y string) int {
		i, _ := strconv.Atoi(x)
		j, _ := strconv.Atoi(y)
		return j - i
	})
	entries := make([]any, 0, home)
	for _, p := range sorted[:min(home, len(sorted))] {
		entries = append(entries, p+":"+a)
	}
	const chunk = 1000
	now := float64(time.Now().UnixMilli())
	for start := 0; start < n; start += chunk {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			zs := make([]redis.Z, 0, chunk)
			for i := start; i < min(start+chunk, n); i++ {
				f := strconv.Itoa(1_000_000 + i)
				zs = append(zs, redis.Z{Score: now, Member: f})
				p.ZAdd(ctx, k.Following(f), redis.Z{Score: now, Member: a})
				if len(entries) > 0 {
					p.RPush(ctx, k.Home(f), entries...)
				}
				p.HSet(ctx, k.HomeMark(f), "floor", 0)
			}
			p.ZAdd(ctx, k.Followers(a), zs...)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func p50(ds []time.Duration) time.Duration { return pct(ds, 0.5) }

// pct is the q quantile of ds.
func pct(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*q)]
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
