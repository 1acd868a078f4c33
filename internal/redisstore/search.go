package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// User search: users by a prefix of their name or display name, most
// followed first (searchUsers).
//
// One zset, UserSearch, holds every name and display name as a member
// "<search key>\x00<user id>" with score 0, so ZRANGE BYLEX over
// [prefix, prefix\xff) lists the matches in key order (\xff never occurs
// in UTF-8, so it bounds every key that starts with the prefix). A search
// reads the first searchWindow matches (one round trip, with the viewer's
// blocks), then their follower counts (one round trip), and ranks them:
// the Redis work is bounded by the window whatever the number of users.
// The ranking is exact when a prefix matches at most searchWindow names;
// a shorter prefix ranks the first searchWindow matches in key order
// (a user typing one letter sees popular users among those, and each
// letter more narrows the window to what matches).
//
// The entry of a name is written when the name is claimed (CreateUser,
// before the profile: a complete account always has it), a display
// name's by IndexDisplayName; UnindexUser takes a user's entries out
// (deletion, suspension). An entry whose profile never got written (an
// abandoned registration) finds no user and is left out of answers.

// searchWindow is how many index entries one search ranks.
const searchWindow = 200

// UserSearchService answers searchUsers and keeps its index.
type UserSearchService struct {
	rdb  redis.UniversalClient
	keys Keys
}

// NewUserSearchService returns the user search over db's client and keys.
func NewUserSearchService(db *DB) *UserSearchService {
	return &UserSearchService{rdb: db.rdb, keys: db.keys}
}

// searchMember is the index member of one name (or display name) of id.
func searchMember(name, id string) string { return social.SearchKey(name) + "\x00" + id }

// IndexUser adds id's name and display name (when not "") to the index:
// idempotent.
func (s *UserSearchService) IndexUser(ctx context.Context, id, name, displayName string) error {
	members := []redis.Z{{Member: searchMember(name, id)}}
	if displayName != "" {
		members = append(members, redis.Z{Member: searchMember(displayName, id)})
	}
	if err := s.rdb.ZAdd(ctx, s.keys.UserSearch(), members...).Err(); err != nil {
		return fmt.Errorf("index user %s for search: %w", id, err)
	}
	return nil
}

// IndexDisplayName moves id's display-name entry from old to new ("" for
// none) in one step.
func (s *UserSearchService) IndexDisplayName(ctx context.Context, id, old, new string) error {
	return indexDisplayName(ctx, s.rdb, s.keys, id, old, new)
}

// indexDisplayName is IndexDisplayName for the services that change a
// display name (ProfileService.UpdateProfile).
func indexDisplayName(ctx context.Context, rdb redis.UniversalClient, keys Keys, id, old, new string) error {
	if social.SearchKey(old) == social.SearchKey(new) {
		return nil
	}
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if old != "" {
			p.ZRem(ctx, keys.UserSearch(), searchMember(old, id))
		}
		if new != "" {
			p.ZAdd(ctx, keys.UserSearch(), redis.Z{Member: searchMember(new, id)})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index display name of user %s: %w", id, err)
	}
	return nil
}

// UnindexUser takes id's entries for its name and display name (when not
// "") out of the index, for an account deleted or suspended: idempotent.
func (s *UserSearchService) UnindexUser(ctx context.Context, id, name, displayName string) error {
	members := []any{searchMember(name, id)}
	if displayName != "" {
		members = append(members, searchMember(displayName, id))
	}
	if err := s.rdb.ZRem(ctx, s.keys.UserSearch(), members...).Err(); err != nil {
		return fmt.Errorf("take user %s out of search: %w", id, err)
	}
	return nil
}

// SearchUsers returns the ids of the first users (at most first) whose
// name or display name starts with prefix (case-insensitive), most
// followed first, leaving out users in a block with viewerID ("" for an
// anonymous viewer): two round trips.
func (s *UserSearchService) SearchUsers(ctx context.Context, viewerID, prefix string, first int) ([]string, error) {
	key, err := social.ValidateSearchPrefix(prefix)
	if err != nil {
		return nil, err
	}
	if err := social.ValidateFirst(first); err != nil {
		return nil, err
	}
	var found, blocks *redis.StringSliceCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		found = p.ZRangeByLex(ctx, s.keys.UserSearch(), &redis.ZRangeBy{Min: "[" + key, Max: "(" + key + "\xff", Count: searchWindow})
		if viewerID != "" {
			blocks = p.SUnion(ctx, s.keys.Blocks(viewerID), s.keys.BlockedBy(viewerID))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search users by %q: %w", prefix, err)
	}
	hidden := map[string]bool{}
	if blocks != nil {
		for _, u := range blocks.Val() {
			hidden[u] = true
		}
	}
	var ids, keys []string
	for _, m := range found.Val() {
		k, id, ok := strings.Cut(m, "\x00")
		if !ok || !social.IsID(id) || hidden[id] || slices.Contains(ids, id) {
			continue
		}
		ids, keys = append(ids, id), append(keys, k)
	}
	return s.rank(ctx, ids, keys, first)
}

// rank orders candidates by followers, most first, then by their key, and
// keeps first: one pipeline of ZCARDs.
func (s *UserSearchService) rank(ctx context.Context, ids, keys []string, first int) ([]string, error) {
	if len(ids) == 0 {
		return []string{}, nil
	}
	counts := make([]*redis.IntCmd, len(ids))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			counts[i] = p.ZCard(ctx, s.keys.Followers(id))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count followers of %d users: %w", len(ids), err)
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(counts[b].Val(), counts[a].Val()), cmp.Compare(keys[a], keys[b]))
	})
	out := make([]string, 0, min(first, len(ids)))
	for _, i := range order[:min(first, len(order))] {
		out = append(out, ids[i])
	}
	return out, nil
}

// BuildUserSearch indexes every name of the Names index that the search
// index lacks, for a database written before user search existed: the
// Layout hash records it done ("usersearch"), so later starts cost one
// read. HSCAN pages of 1000 names, each one ZADD.
func (s *UserSearchService) BuildUserSearch(ctx context.Context) (int, error) {
	done, err := s.rdb.HExists(ctx, s.keys.Layout(), "usersearch").Result()
	if err != nil || done {
		return 0, err
	}
	n := 0
	var cursor uint64
	for {
		kv, next, err := s.rdb.HScan(ctx, s.keys.Names(), cursor, "*", 1000).Result()
		if err != nil {
			return n, fmt.Errorf("scan names: %w", err)
		}
		var members []redis.Z
		for i := 0; i+1 < len(kv); i += 2 {
			members = append(members, redis.Z{Member: searchMember(kv[i], kv[i+1])})
		}
		if len(members) > 0 {
			if err := s.rdb.ZAdd(ctx, s.keys.UserSearch(), members...).Err(); err != nil {
				return n, fmt.Errorf("index names: %w", err)
			}
			n += len(members)
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	return n, s.rdb.HSet(ctx, s.keys.Layout(), "usersearch", "1").Err()
}
