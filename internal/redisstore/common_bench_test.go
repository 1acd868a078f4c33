package redisstore_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// BenchmarkCommonFollowingLongLists measures one commonFollowing page of
// two users who follow 100 000 users each, with the gateway's read budget:
// the time of the call and the CPU time Redis spends on it (redis-µs/op,
// from INFO cpu; run it alone, as the server is the package's), when a
// tenth of the lists is shared and when nothing is (the longest walk).
// docs/security.md quotes the figures.
func BenchmarkCommonFollowingLongLists(b *testing.B) {
	const n = 100_000
	rdb := redistest.Client(b)
	s := redisstore.New(rdb, redistest.Prefix(b))
	ctx := context.Background()
	users := graphUsers(b, s, 3)
	a, tenth, none := users[0], users[1], users[2]
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(key string, member func(i int) string) {
		for i := 0; i < n; i += 1000 {
			zs := make([]redis.Z, 0, 1000)
			for j := i; j < i+1000; j++ {
				zs = append(zs, redis.Z{Score: float64(1_700_000_000_000 + j), Member: member(j)})
			}
			if err := rdb.ZAdd(ctx, key, zs...).Err(); err != nil {
				b.Fatal(err)
			}
		}
	}
	fill(s.Keys().Following(a), func(i int) string { return strconv.Itoa(1_000_000 + i) })
	fill(s.Keys().Following(tenth), func(i int) string {
		if r.IntN(10) == 0 {
			return strconv.Itoa(1_000_000 + r.IntN(n))
		}
		return strconv.Itoa(5_000_000 + i)
	})
	fill(s.Keys().Following(none), func(i int) string { return strconv.Itoa(9_000_000 + i) })
	if err := s.LoadScripts(ctx); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, other string }{{"a tenth shared", tenth}, {"none shared", none}} {
		b.Run(bc.name, func(b *testing.B) {
			before := redisCPU(b, rdb)
			for b.Loop() {
				octx := social.WithReadBudget(ctx, social.DefaultReadBudget)
				if _, err := s.CommonFollowing(octx, a, bc.other, social.PageRequest{First: 20}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((redisCPU(b, rdb)-before)*1e6/float64(b.N), "redis-µs/op")
		})
	}
}

// redisCPU is the CPU time (user and system, seconds) the Redis server has
// used, summed over the masters of a cluster.
func redisCPU(tb testing.TB, rdb redis.UniversalClient) float64 {
	tb.Helper()
	total := 0.0
	read := func(c *redis.Client) {
		info, err := c.Info(context.Background(), "cpu").Result()
		if err != nil {
			tb.Fatal(err)
		}
		for line := range strings.SplitSeq(info, "\r\n") {
			k, v, _ := strings.Cut(line, ":")
			if k == "used_cpu_user" || k == "used_cpu_sys" {
				f, _ := strconv.ParseFloat(v, 64)
				total += f
			}
		}
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex // ForEachMaster calls on every master at once
		_ = cc.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			read(c)
			return nil
		})
	} else {
		read(rdb.(*redis.Client))
	}
	return total
}
