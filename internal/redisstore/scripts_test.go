package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

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
		id        int
		cap       int
		want      []string
		wantFloor string
		inserted  int64
	}{
		{"into empty", nil, "", 5, 10, []string{"5:1"}, "", 1},
		{"newest at the head", []string{"4:1", "2:1"}, "", 5, 10, []string{"5:1", "4:1", "2:1"}, "", 1},
		{"older in its place", []string{"6:1", "2:1"}, "", 5, 10, []string{"6:1", "5:1", "2:1"}, "", 1},
		{"oldest at the tail", []string{"6:1", "4:1"}, "", 1, 10, []string{"6:1", "4:1", "1:1"}, "", 1},
		{"already there", []string{"6:1", "5:1"}, "", 5, 10, []string{"6:1", "5:1"}, "", 0},
		{"below the floor", []string{"6:1"}, "4", 3, 10, []string{"6:1"}, "4", 0},
		{"empty, below the floor", nil, "4", 3, 10, nil, "4", 0},
		{"empty, above the floor", nil, "4", 5, 10, []string{"5:1"}, "4", 1},
		{"trimmed to cap raises the floor", []string{"6:1", "4:1"}, "", 7, 2, []string{"7:1", "6:1"}, "6", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rdb.Del(ctx, home, mark)
			for _, e := range tt.list {
				rdb.RPush(ctx, home, e)
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
