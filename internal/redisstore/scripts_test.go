package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
)

// The shared Lua libraries, tested directly as Lua on a real Redis: a
// small script calls the library function with the case's arguments.

func TestLuaListAfter(t *testing.T) {
	rdb := redistest.Client(t)
	ctx := context.Background()
	key := redistest.Prefix(t) + "{l}:list"
	probe := redis.NewScript(redisstore.LuaSource("lib/cursor.lua") + `
return list_after(KEYS[1], redis.call('LLEN', KEYS[1]), tonumber(ARGV[1]), tonumber)`)
	tests := []struct {
		name   string
		list   []any // newest (largest id) first
		cursor int
		want   int64
	}{
		{"empty list", nil, 5, 0},
		{"cursor present", []any{9, 7, 5, 3}, 7, 2},
		{"cursor deleted", []any{9, 7, 5, 3}, 6, 2},
		{"cursor above all", []any{9, 7, 5, 3}, 100, 0},
		{"cursor at the head", []any{9, 7, 5, 3}, 9, 1},
		{"cursor below all", []any{9, 7, 5, 3}, 1, 4},
		{"cursor at the tail", []any{9, 7, 5, 3}, 3, 4},
		{"one element, below", []any{4}, 5, 0},
		{"one element, equal", []any{4}, 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rdb.Del(ctx, key)
			if len(tt.list) > 0 {
				rdb.RPush(ctx, key, tt.list...)
			}
			got, err := probe.Run(ctx, rdb, []string{key}, tt.cursor).Int64()
			if err != nil || got != tt.want {
				t.Fatalf("list_after(%v, %d) = %d, %v; want %d", tt.list, tt.cursor, got, err, tt.want)
			}
		})
	}
}

func TestLuaHomeInsert(t *testing.T) {
	rdb := redistest.Client(t)
	ctx := context.Background()
	p := redistest.Prefix(t)
	home, mark := p+"{u1}:home", p+"{u1}:mark"
	probe := redis.NewScript(redisstore.LuaSource("lib/home.lua") + `
return home_insert(KEYS[1], KEYS[2], tonumber(ARGV[1]), ARGV[1] .. ':' .. ARGV[2], tonumber(ARGV[3]))`)
	tests := []struct {
		name      string
		list      []string
		floor     string
		noMark    bool          // the mark does not exist (never read, or expired)
		markTTL   time.Duration // the mark's TTL (0: none)
		id        int
		cap       int
		want      []string
		wantFloor string
		inserted  int64
	}{
		{name: "into empty", id: 5, cap: 10, want: []string{"5:1"}, inserted: 1},
		{name: "into empty, the list takes the mark's TTL", markTTL: time.Hour, id: 5, cap: 10, want: []string{"5:1"}, inserted: 1},
		{name: "into empty, no mark: nothing (the next read rebuilds)", noMark: true, id: 5, cap: 10},
		{name: "newest at the head", list: []string{"4:1", "2:1"}, id: 5, cap: 10, want: []string{"5:1", "4:1", "2:1"}, inserted: 1},
		{name: "newest at the head, no mark", list: []string{"4:1"}, noMark: true, id: 5, cap: 10, want: []string{"5:1", "4:1"}, inserted: 1},
		{name: "older in its place", list: []string{"6:1", "2:1"}, id: 5, cap: 10, want: []string{"6:1", "5:1", "2:1"}, inserted: 1},
		{name: "oldest at the tail", list: []string{"6:1", "4:1"}, id: 1, cap: 10, want: []string{"6:1", "4:1", "1:1"}, inserted: 1},
		{name: "already there", list: []string{"6:1", "5:1"}, id: 5, cap: 10, want: []string{"6:1", "5:1"}},
		{name: "below the floor", list: []string{"6:1"}, floor: "4", id: 3, cap: 10, want: []string{"6:1"}, wantFloor: "4"},
		{name: "empty, below the floor", floor: "4", id: 3, cap: 10, wantFloor: "4"},
		{name: "empty, above the floor", floor: "4", id: 5, cap: 10, want: []string{"5:1"}, wantFloor: "4", inserted: 1},
		{name: "trimmed to cap raises the floor", list: []string{"6:1", "4:1"}, id: 7, cap: 2, want: []string{"7:1", "6:1"}, wantFloor: "6", inserted: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rdb.Del(ctx, home, mark)
			for _, e := range tt.list {
				rdb.RPush(ctx, home, e)
			}
			if !tt.noMark {
				rdb.HSet(ctx, mark, "active", 1)
				if tt.markTTL > 0 {
					rdb.PExpire(ctx, mark, tt.markTTL)
				}
			}
			if tt.floor != "" {
				rdb.HSet(ctx, mark, "floor", tt.floor)
			}
			got, err := probe.Run(ctx, rdb, []string{home, mark}, tt.id, 1, tt.cap).Int64()
			if err != nil || got != tt.inserted {
				t.Fatalf("home_insert = %d, %v; want %d", got, err, tt.inserted)
			}
			list := rdb.LRange(ctx, home, 0, -1).Val()
			if !slices.Equal(list, tt.want) && !(len(list) == 0 && len(tt.want) == 0) {
				t.Errorf("list = %v, want %v", list, tt.want)
			}
			if floor := rdb.HGet(ctx, mark, "floor").Val(); floor != tt.wantFloor {
				t.Errorf("floor = %q, want %q", floor, tt.wantFloor)
			}
			if len(tt.list) == 0 && len(list) > 0 {
				ttl := rdb.PTTL(ctx, home).Val()
				if tt.markTTL > 0 && (ttl <= 0 || ttl > tt.markTTL) || tt.markTTL == 0 && ttl != -1 {
					t.Errorf("the new list's TTL = %v, want the mark's (%v)", ttl, tt.markTTL)
				}
			}
		})
	}
}

func TestLuaCountSample(t *testing.T) {
	rdb := redistest.Client(t)
	ctx := context.Background()
	key := redistest.Prefix(t) + "{u1}:following"
	probe := redis.NewScript(redisstore.LuaSource("lib/sample.lua") + `
return count_sample(KEYS[1], redis.call('ZCARD', KEYS[1]), tonumber(ARGV[1]), tonumber(ARGV[2]))`)
	tests := []struct {
		name         string
		card, n, run int
	}{
		{"empty", 0, 8, 4},
		{"shorter than the sample", 5, 8, 4},
		{"as long as the sample", 8, 8, 4},
		{"one longer", 9, 8, 4},
		{"long", 1000, 64, 16},
		{"stretches one run long", 64, 32, 16},
		{"the store's bounds", 100000, redisstore.CommonSample, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rdb.Del(ctx, key)
			for i := 0; i < tt.card; i += 1000 {
				var zs []redis.Z
				for j := i; j < min(i+1000, tt.card); j++ {
					zs = append(zs, redis.Z{Score: float64(j), Member: strconv.Itoa(j)})
				}
				rdb.ZAdd(ctx, key, zs...)
			}
			got, err := probe.Run(ctx, rdb, []string{key}, tt.n, tt.run).StringSlice()
			if err != nil {
				t.Fatal(err)
			}
			if tt.card <= tt.n {
				// The whole list: the count is exact.
				if len(got) != tt.card {
					t.Fatalf("%d members, want all %d", len(got), tt.card)
				}
				return
			}
			// n members in runs of run consecutive ranks, each run
			// inside its stretch of the list.
			if len(got) != tt.n {
				t.Fatalf("%d members, want %d", len(got), tt.n)
			}
			stretch := float64(tt.card) / float64(tt.n/tt.run)
			for i, m := range got {
				rank, _ := strconv.Atoi(m)
				if i%tt.run > 0 {
					if prev, _ := strconv.Atoi(got[i-1]); rank != prev+1 {
						t.Fatalf("member %d at rank %d after rank %d: runs are consecutive", i, rank, prev)
					}
				}
				if s := float64(i / tt.run); rank < int(s*stretch) || rank >= int((s+1)*stretch) {
					t.Fatalf("member %d at rank %d: outside stretch %v", i, rank, s)
				}
			}
			again, err := probe.Run(ctx, rdb, []string{key}, tt.n, tt.run).StringSlice()
			if err != nil || !slices.Equal(got, again) {
				t.Fatalf("a second sample of the same list differs: %v", err)
			}
		})
	}
}

// Every embedded script compiles: a syntax error in a .lua file fails here
// rather than on the first request that runs it.
func TestLuaScriptsLoad(t *testing.T) {
	rdb := redistest.Client(t)
	ctx := context.Background()
	for name, src := range redisstore.ScriptSources {
		t.Run(name, func(t *testing.T) {
			if strings.HasPrefix(src, "#!") && !redistest.Real() {
				t.Skip("the embedded server knows no shebang line; the store runs this script only on Redis Cluster")
			}
			if err := rdb.ScriptLoad(ctx, src).Err(); err != nil {
				t.Fatal(fmt.Errorf("load: %w", err))
			}
		})
	}
}
