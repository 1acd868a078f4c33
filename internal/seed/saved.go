package seed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
)

// metaKey is where Save keeps a Data, beside the data set's own keys.
func metaKey(prefix string) string { return prefix + "{seed}:meta" }

// Save records d in Redis under the data set's prefix, for Load.
func Save(ctx context.Context, rdb redis.UniversalClient, prefix string, d *Data) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return rdb.Set(ctx, metaKey(prefix), b, 0).Err()
}

// ErrNoData says Load found no saved data set.
var ErrNoData = errors.New("no seeded data set under this prefix")

// Load returns the Data that Save recorded under prefix (PostIDs empty).
func Load(ctx context.Context, rdb redis.UniversalClient, prefix string) (*Data, error) {
	b, err := rdb.Get(ctx, metaKey(prefix)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNoData
	}
	if err != nil {
		return nil, err
	}
	d := &Data{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("decode seeded data set: %w", err)
	}
	d.Config = d.Config.withDefaults()
	return d, nil
}

// Clear deletes every key under prefix (SCAN and UNLINK), so a data set can
// be built again. Use it only on a prefix of its own. On Redis Cluster it
// scans every master, and unlinks key by key in pipelines, since one
// UNLINK of keys in several slots is refused (CROSSSLOT).
func Clear(ctx context.Context, rdb redis.UniversalClient, prefix string) error {
	if prefix == "" {
		return errors.New("seed: refusing to clear an empty prefix")
	}
	pattern := escapeGlob(prefix) + "*"
	return redisstore.EachServer(ctx, rdb, func(ctx context.Context, c redis.UniversalClient) error {
		return clearNode(ctx, c, pattern)
	})
}

// clearNode unlinks the keys matching pattern on one server.
func clearNode(ctx context.Context, rdb redis.UniversalClient, pattern string) error {
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	var batch []string
	unlink := func() error {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range batch {
				p.Unlink(ctx, k)
			}
			return nil
		})
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			if err := unlink(); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return unlink()
	}
	return nil
}

func escapeGlob(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}
