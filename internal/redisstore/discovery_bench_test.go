package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
)

// BenchmarkTrendsMemory measures what 10 000 active tags cost in Redis's
// memory: the bytes (MEMORY USAGE, SAMPLES 0) of every key of the tags
// (their post index, hourly HyperLogLogs and use counters) and of the
// window's index of tags, per tag, for tags used by 1 and by 20 users in
// one hour, and by 1 user in each of the window's 24 hours.
// docs/performance.md quotes the figures:
//
//	go test -run '^$' -bench TrendsMemory -benchtime 1x ./internal/redisstore
func BenchmarkTrendsMemory(b *testing.B) {
	const tags = 10000
	cases := []struct {
		name         string
		users, hours int
	}{
		{"1 user in 1 hour", 1, 1},
		{"20 users in 1 hour", 20, 1},
		{"1 user in each of 24 hours", 1, 24},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			rdb := redistest.Client(b)
			s := redisstore.New(rdb, redistest.Prefix(b))
			ctx := context.Background()
			now := time.Now().Truncate(time.Hour)
			s.SetClock(func() time.Time { return now })
			post := 0
			for i := range tags {
				tag := "tag" + strconv.Itoa(i)
				for h := range tc.hours {
					for u := range tc.users {
						post++
						if err := s.IndexTagUse(ctx, tag, strconv.Itoa(post), strconv.Itoa(u+1), now.Add(-time.Duration(h)*time.Hour)); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			k := s.Keys()
			keys := []string{k.TrendTags()}
			for i := range tags {
				tag := "tag" + strconv.Itoa(i)
				keys = append(keys, k.TagPosts(tag))
				for h := range tc.hours {
					hour := now.Add(-time.Duration(h)*time.Hour).Unix() / 3600
					keys = append(keys, k.TagUsers(tag, hour), k.TagUses(tag, hour))
				}
			}
			total := memoryUsage(b, rdb, keys)
			start := time.Now()
			for b.Loop() {
				if err := rdb.Del(ctx, k.TrendLock()).Err(); err != nil {
					b.Fatal(err)
				}
				if _, err := s.RefreshTrends(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/refresh")
			b.ReportMetric(float64(total)/tags, "bytes/tag")
			b.ReportMetric(float64(total)/(1<<20), "MiB/10k-tags")
		})
	}
}

// memoryUsage sums MEMORY USAGE (SAMPLES 0) of keys, in pipelines.
func memoryUsage(tb testing.TB, rdb redis.UniversalClient, keys []string) int64 {
	tb.Helper()
	ctx := context.Background()
	var total int64
	for start := 0; start < len(keys); start += 1000 {
		part := keys[start:min(start+1000, len(keys))]
		cmds := make([]*redis.IntCmd, len(part))
		if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, key := range part {
				cmds[i] = p.MemoryUsage(ctx, key, 0)
			}
			return nil
		}); err != nil && !isNilErr(err) {
			tb.Fatal(err)
		}
		for _, c := range cmds {
			total += c.Val()
		}
	}
	return total
}

func isNilErr(err error) bool { return err == redis.Nil }

// BenchmarkSearchUsers measures searchUsers' store work at 100 000 indexed
// users (names u<n>_…, follower counts 0 to 99): one search by a prefix
// matching 1, about 1 000 (past the ranked window) and 11 111 names.
// docs/performance.md quotes the figures:
//
//	go test -run '^$' -bench SearchUsers ./internal/redisstore
func BenchmarkSearchUsers(b *testing.B) {
	const users = 100000
	rdb := redistest.Client(b)
	s := redisstore.New(rdb, redistest.Prefix(b))
	ctx := context.Background()
	for start := 1; start <= users; start += 1000 {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for id := start; id < start+1000; id++ {
				u := strconv.Itoa(id)
				p.ZAdd(ctx, s.Keys().UserSearch(), redis.Z{Member: fmt.Sprintf("u%d_name\x00%s", id, u)})
				for f := range id % 100 {
					p.ZAdd(ctx, s.Keys().Followers(u), redis.Z{Score: 1, Member: strconv.Itoa(f + 1)})
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	viewer := "1"
	for _, prefix := range []string{"u54321_", "u5432", "u5"} {
		b.Run(prefix, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.SearchUsers(ctx, viewer, prefix, 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
