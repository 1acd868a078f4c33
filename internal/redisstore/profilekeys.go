package redisstore

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// MigrateProfiles moves every profile hash from its earlier name
// (Keys.LegacyUser, "u:{u<id>}") to its own prefix (Keys.User,
// "up:{u<id>}"), so that the profile cache's tracking prefix matches
// profiles only. Both names share the user's hash tag, hence the slot:
// each move is one RENAMENX, which leaves a profile already at its new
// name alone. It scans every server once, then records the move in
// Keys.Layout; a later start reads that and returns at once. It returns
// how many hashes it moved. Running it twice, or on two processes at
// once, is harmless. Processes of the earlier layout must not write
// meanwhile: a profile they register after the scan keeps the old name.
func (s *DB) MigrateProfiles(ctx context.Context) (int64, error) {
	done, err := s.rdb.HGet(ctx, s.keys.Layout(), "profiles").Result()
	if err != nil && !isNil(err) {
		return 0, fmt.Errorf("read the data layout: %w", err)
	}
	if done != "" {
		return 0, nil
	}
	var moved atomic.Int64
	err = EachServer(ctx, s.rdb, func(ctx context.Context, c redis.UniversalClient) error {
		n, err := s.migrateProfilesOn(ctx, c)
		moved.Add(n)
		return err
	})
	if err != nil {
		return moved.Load(), fmt.Errorf("move profile hashes: %w", err)
	}
	if err := s.rdb.HSet(ctx, s.keys.Layout(), "profiles", "up").Err(); err != nil {
		return moved.Load(), fmt.Errorf("record the data layout: %w", err)
	}
	return moved.Load(), nil
}

// migrateProfilesOn moves the profile hashes of one server.
func (s *DB) migrateProfilesOn(ctx context.Context, c redis.UniversalClient) (int64, error) {
	head, _ := aroundID(s.keys.LegacyUser)
	var moved int64
	iter := c.ScanType(ctx, 0, globEscape(head)+"*}", 1000, "hash").Iterator()
	for iter.Next(ctx) {
		old := iter.Val()
		id := strings.TrimSuffix(strings.TrimPrefix(old, head), "}")
		if s.keys.LegacyUser(id) != old || strings.ContainsAny(id, "{}") {
			continue // another hash of the user's (":homemark", ...)
		}
		ok, err := c.RenameNX(ctx, old, s.keys.User(id)).Result()
		if err != nil {
			return moved, fmt.Errorf("move %s: %w", old, err)
		}
		if ok {
			moved++
		}
	}
	return moved, iter.Err()
}

// globEscape escapes the characters SCAN's MATCH treats specially.
func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)
	return r.Replace(s)
}

// accountsLive reports which of users have a profile, under its current
// or earlier name (one EXISTS a user, both keys in its slot), in one
// pipeline.
func (s *DB) accountsLive(ctx context.Context, users []string) (map[string]bool, error) {
	cmds := map[string]*redis.IntCmd{}
	if _, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for _, u := range users {
			if _, ok := cmds[u]; !ok && social.IsID(u) {
				cmds[u] = pl.Exists(ctx, s.keys.User(u), s.keys.LegacyUser(u))
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read %d accounts: %w", len(cmds), err)
	}
	live := make(map[string]bool, len(cmds))
	for u, c := range cmds {
		live[u] = c.Val() > 0
	}
	return live, nil
}
