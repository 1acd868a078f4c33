package gatewaytest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redistest"
)

// RedisSnapshot is every key under a prefix with its value, by type:
// a hash's fields and a set's members sorted, a zset's members with their
// scores, a list in order, a string as it is, a stream by its DUMP (its
// entries and consumer groups). Not the DUMP of the others: a hash or set
// in a hash table may change its order when a read moves Redis's
// incremental rehashing on, which changes nothing a client can read.
// TTLs are left out, as reads may refresh them.
func RedisSnapshot(t testing.TB, rdb redis.UniversalClient, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, k := range redistest.Keys(t, rdb, prefix+"*") {
		v, err := snapshotValue(ctx, rdb, k)
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// snapshotValue is key's type and value as RedisSnapshot compares them.
func snapshotValue(ctx context.Context, rdb redis.UniversalClient, key string) (string, error) {
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		return "", err
	}
	var parts []string
	switch typ {
	case "hash":
		m, err := rdb.HGetAll(ctx, key).Result()
		if err != nil {
			return "", err
		}
		for f, v := range m {
			parts = append(parts, f+"="+v)
		}
		slices.Sort(parts)
	case "set":
		if parts, err = rdb.SMembers(ctx, key).Result(); err != nil {
			return "", err
		}
		slices.Sort(parts)
	case "zset":
		zs, err := rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
		if err != nil {
			return "", err
		}
		for _, z := range zs {
			parts = append(parts, fmt.Sprint(z.Member, "@", z.Score))
		}
	case "list":
		if parts, err = rdb.LRange(ctx, key, 0, -1).Result(); err != nil {
			return "", err
		}
	case "string":
		v, err := rdb.Get(ctx, key).Result()
		return typ + ":" + v, err
	default:
		d, err := rdb.Dump(ctx, key).Result()
		return typ + ":" + d, err
	}
	return typ + ":" + strings.Join(parts, "\x00"), nil
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
