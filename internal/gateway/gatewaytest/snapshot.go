package gatewaytest

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redistest"
)

// RedisSnapshot is every key under a prefix with its DUMP (type, value and
// encoding; TTLs are left out, as reads may refresh them).
func RedisSnapshot(t testing.TB, rdb redis.UniversalClient, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, k := range redistest.Keys(t, rdb, prefix+"*") {
		d, err := rdb.Dump(ctx, k).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		out[k] = d
	}
	return out
}

// DiffSnapshots names the keys added, removed or changed.
func DiffSnapshots(before, after map[string]string) []string {
	var diff []string
	for k, v := range after {
		if w, ok := before[k]; !ok {
			diff = append(diff, "+"+k)
		} else if w != v {
			diff = append(diff, "~"+k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			diff = append(diff, "-"+k)
		}
	}
	slices.Sort(diff)
	return diff
}
