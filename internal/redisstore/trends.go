package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Trends: the tags used by the most distinct users in the last Window.
//
// Counting happens as posts are indexed (tags.go, tag_add.lua): per tag
// and hour, a HyperLogLog of the authors (PFADD: 12 KB at most, a few
// hundred bytes for a tag few use) and a use counter (INCR), both in the
// tag's slot and expiring when their hour leaves the window, and the tag
// in TrendTags. Only PUBLIC posts count, once each (the index's ZADD
// guards the counters), so one user posting a tag a thousand times is one
// account. The memory per tag is bounded by the window's hours, whatever
// the traffic.
//
// Reading never counts: trendingTags answers from TrendRanking, one GET.
// The workers refresh it every Every (RefreshTrends): per tag of the
// window one PFCOUNT over its hours' HyperLogLogs (the union, in one
// slot) and one MGET of its counters, in pipelines of trendBatch tags.

// TrendConfig tunes the trends.
type TrendConfig struct {
	// Window is how far back trends count, in whole hours.
	Window time.Duration
	// Every is how often a worker refreshes the ranking.
	Every time.Duration
	// Keep is how many tags the ranking keeps (trendingTags' largest
	// first).
	Keep int
	// MaxTags bounds TrendTags: the tags a refresh counts, the most
	// recently used kept.
	MaxTags int
}

// DefaultTrends is the trends of a day, refreshed every minute.
func DefaultTrends() TrendConfig {
	return TrendConfig{Window: 24 * time.Hour, Every: time.Minute, Keep: social.MaxFirst, MaxTags: 100000}
}

// hours is how many hourly buckets the window spans.
func (c TrendConfig) hours() int64 { return int64(c.Window / time.Hour) }

// counterTTL is how long the counters of the hour of created still count
// at now: until the hour leaves the window (and a minute's slack for
// clocks).
func (c TrendConfig) counterTTL(created, now time.Time) time.Duration {
	return created.Truncate(time.Hour).Add(c.Window + time.Minute).Sub(now)
}

// rankingTTL is how long a ranking lives when no worker refreshes it.
func (c TrendConfig) rankingTTL() time.Duration { return max(10*c.Every, 10*time.Minute) }

// TrendService answers trendingTags and refreshes its ranking.
type TrendService struct {
	rdb  redis.UniversalClient
	keys Keys
	now  func() time.Time
	cfg  TrendConfig
}

// NewTrendService returns the trends over db's client, keys and clock
// (the store's: a test that moves it moves the trends' too).
func NewTrendService(db *DB, cfg TrendConfig) *TrendService {
	return &TrendService{rdb: db.rdb, keys: db.keys, now: func() time.Time { return db.set.now() }, cfg: cfg}
}

// TrendingTags returns the first tags of the cached ranking: one GET. An
// empty ranking (no refresh yet, or nothing used) is an empty list.
func (s *TrendService) TrendingTags(ctx context.Context, first int) ([]social.TagTrend, error) {
	if err := social.ValidateFirst(first); err != nil {
		return nil, err
	}
	raw, err := s.rdb.Get(ctx, s.keys.TrendRanking()).Bytes()
	if isNil(err) {
		return []social.TagTrend{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load trend ranking: %w", err)
	}
	var rows [][3]any
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("decode trend ranking: %w", err)
	}
	out := make([]social.TagTrend, 0, min(first, len(rows)))
	for _, r := range rows[:min(first, len(rows))] {
		tag, _ := r[0].(string)
		uses, _ := r[1].(float64)
		accounts, _ := r[2].(float64)
		out = append(out, social.TagTrend{Tag: tag, Uses: int(uses), Accounts: int(accounts)})
	}
	return out, nil
}

// trendBatch is how many tags one pipeline of a refresh counts.
const trendBatch = 500

// RefreshTrends counts the tags of the window and writes the ranking,
// unless another worker holds the refresh (false). The lock expires
// before the next refresh is due, so a worker that dies holding it
// delays one refresh at most.
func (s *TrendService) RefreshTrends(ctx context.Context) (bool, error) {
	now := s.now()
	ok, err := s.rdb.SetNX(ctx, s.keys.TrendLock(), strconv.FormatInt(now.UnixMilli(), 10), max(s.cfg.Every*9/10, time.Second)).Result()
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("take the trend refresh: %w", err)
		}
		return false, err
	}
	tags, err := s.windowTags(ctx, now)
	if err != nil {
		return false, err
	}
	var all []social.TagTrend
	for start := 0; start < len(tags); start += trendBatch {
		got, err := s.count(ctx, tags[start:min(start+trendBatch, len(tags))], now)
		if err != nil {
			return false, err
		}
		all = append(all, got...)
	}
	return true, s.writeRanking(ctx, rank(all, s.cfg.Keep))
}

// windowTags drops the tags last used before the window and returns the
// rest, the MaxTags most recently used.
func (s *TrendService) windowTags(ctx context.Context, now time.Time) ([]string, error) {
	from := now.Add(-s.cfg.Window).UnixMilli()
	var tags *redis.StringSliceCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, s.keys.TrendTags(), "-inf", "("+strconv.FormatInt(from, 10))
		p.ZRemRangeByRank(ctx, s.keys.TrendTags(), 0, -int64(s.cfg.MaxTags)-1)
		tags = p.ZRange(ctx, s.keys.TrendTags(), 0, -1)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the tags of the trend window: %w", err)
	}
	return tags.Val(), nil
}

// count reads the window's uses and distinct users of tags: one pipeline
// of MGETs of the use counters, then one of PFCOUNTs, each over the hours
// that have uses (a multi-key PFCOUNT merges into a dense 12 KB register
// array, so hours without uses are left out), and none for a tag used
// once (one use is one user).
func (s *TrendService) count(ctx context.Context, tags []string, now time.Time) ([]social.TagTrend, error) {
	last := now.Unix() / 3600
	first := last - s.cfg.hours() + 1
	uses := make([]*redis.SliceCmd, len(tags))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, tag := range tags {
			counters := make([]string, 0, s.cfg.hours())
			for h := first; h <= last; h++ {
				counters = append(counters, s.keys.TagUses(tag, h))
			}
			uses[i] = p.MGet(ctx, counters...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count uses of %d tags: %w", len(tags), err)
	}
	out := make([]social.TagTrend, len(tags))
	users := make([]*redis.IntCmd, len(tags))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, tag := range tags {
			out[i].Tag = tag
			var hll []string
			for h, v := range uses[i].Val() {
				if n, _ := strconv.Atoi(fmt.Sprint(v)); n > 0 {
					out[i].Uses += n
					hll = append(hll, s.keys.TagUsers(tag, first+int64(h)))
				}
			}
			if out[i].Uses > 1 {
				users[i] = p.PFCount(ctx, hll...)
			} else {
				out[i].Accounts = out[i].Uses
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count users of %d tags: %w", len(tags), err)
	}
	n := 0
	for i := range out {
		if users[i] != nil {
			out[i].Accounts = int(users[i].Val())
		}
		if out[i].Accounts > 0 && out[i].Uses > 0 {
			out[n] = out[i]
			n++
		}
	}
	return out[:n], nil
}

// rank orders trends by accounts, then uses, then tag, and keeps keep.
func rank(all []social.TagTrend, keep int) []social.TagTrend {
	slices.SortFunc(all, func(a, b social.TagTrend) int {
		return cmp.Or(cmp.Compare(b.Accounts, a.Accounts), cmp.Compare(b.Uses, a.Uses), cmp.Compare(a.Tag, b.Tag))
	})
	return all[:min(keep, len(all))]
}

// writeRanking stores the ranking trendingTags reads.
func (s *TrendService) writeRanking(ctx context.Context, ranked []social.TagTrend) error {
	rows := make([][3]any, len(ranked))
	for i, t := range ranked {
		rows[i] = [3]any{t.Tag, t.Uses, t.Accounts}
	}
	raw, err := json.Marshal(rows)
	if err != nil {
		return fmt.Errorf("encode trend ranking: %w", err)
	}
	if err := s.rdb.Set(ctx, s.keys.TrendRanking(), raw, s.cfg.rankingTTL()).Err(); err != nil {
		return fmt.Errorf("store trend ranking: %w", err)
	}
	return nil
}
