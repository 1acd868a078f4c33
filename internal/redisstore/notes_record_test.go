package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// TestLuaNotePack: the scripts' note_pack, given a notification's fields
// by their F.note positions, writes the value the store's note record
// packs, and note_split reads each field back at its position.
func TestLuaNotePack(t *testing.T) {
	rdb := redistest.Client(t)
	ctx := context.Background()
	probe := redis.NewScript(redisstore.LuaSource("lib/notes.lua") + `
local f = {[F.note.kind] = ARGV[1], [F.note.post] = ARGV[2], [F.note.comment] = ARGV[3], [F.note.updated] = ARGV[4],
  [F.note.group] = ARGV[5]}
if ARGV[6] ~= '' then f[F.note.lo], f[F.note.hi], f[F.note.hwm] = ARGV[6], ARGV[7], ARGV[8] end
local v = note_pack(f)
local s = note_split(v)
return {v, s[F.note.kind], s[F.note.post], s[F.note.comment], s[F.note.updated], s[F.note.group],
  s[F.note.lo] or '', s[F.note.hi] or '', s[F.note.hwm] or ''}`)
	at := time.UnixMilli(1_700_000_000_123).UTC()
	for _, tc := range []struct {
		name        string
		n           social.Notification
		group       string
		lo, hi, hwm string
	}{
		{"comment", social.Notification{Kind: social.NoteComment, PostID: "5", CommentID: "9", UpdatedAt: at}, "comment:9", "", "", ""},
		{"follow", social.Notification{Kind: social.NoteFollow, UpdatedAt: at}, "follow", "", "", ""},
		{"like window", social.Notification{Kind: social.NoteLike, PostID: "5", UpdatedAt: at}, "like:5", "100", "", "120"},
		{"ended window", social.Notification{Kind: social.NoteLike, PostID: "5", UpdatedAt: at}, "like:5", "100", "150", "140"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := strconv.FormatInt(tc.n.UpdatedAt.UnixMilli(), 10)
			got, err := probe.Run(ctx, rdb, nil, string(tc.n.Kind), tc.n.PostID, tc.n.CommentID, ms, tc.group, tc.lo, tc.hi, tc.hwm).StringSlice()
			if err != nil {
				t.Fatal(err)
			}
			if want := redisstore.PackNote(tc.n, tc.group, tc.lo, tc.hi, tc.hwm); got[0] != want {
				t.Errorf("note_pack wrote %q, the record packs %q", got[0], want)
			}
			want := []string{string(tc.n.Kind), tc.n.PostID, tc.n.CommentID, ms, tc.group, tc.lo, tc.hi, tc.hwm}
			if strings.Join(got[1:], ",") != strings.Join(want, ",") {
				t.Errorf("note_split read %q, want %q", got[1:], want)
			}
		})
	}
}

// BenchmarkNoteRecordMemory measures what a notification's record costs
// in Redis's memory (MEMORY USAGE, SAMPLES 0) for a user holding the
// default cap of 200, comments (five fields) or likes (eight: their
// window), in three layouts: packed, one NoteData field a notification
// (the store's); one NoteData field per record field; a hash of its own
// per notification. docs/data-model.md quotes the figures:
//
//	go test -run '^$' -bench NoteRecordMemory ./internal/redisstore
func BenchmarkNoteRecordMemory(b *testing.B) {
	rdb := redistest.Client(b)
	ctx := context.Background()
	p := redistest.Prefix(b)
	const notes = 200
	at := time.UnixMilli(1_764_000_000_000).UTC()
	fields := redisstore.NoteFields()
	kinds := map[string]func(i int) string{
		"comments": func(i int) string {
			post, c := strconv.Itoa(1_000_000+7*i), strconv.Itoa(2_000_000+7*i)
			n := social.Notification{Kind: social.NoteComment, PostID: post, CommentID: c, UpdatedAt: at.Add(time.Duration(i) * time.Minute)}
			return redisstore.PackNote(n, "comment:"+c, "", "", "")
		},
		"likes": func(i int) string {
			post := strconv.Itoa(1_000_000 + 7*i)
			n := social.Notification{Kind: social.NoteLike, PostID: post, UpdatedAt: at.Add(time.Duration(i) * time.Minute)}
			return redisstore.PackNote(n, "like:"+post, "1764000000000", "", "1764000060000")
		},
	}
	for _, kind := range []string{"comments", "likes"} {
		rows := make([][]string, notes)
		for i := range rows {
			rows[i] = strings.Split(kinds[kind](i), "|")
		}
		layouts := []struct {
			name  string
			write func(pl redis.Pipeliner, key string) []string // the keys written
		}{
			{"packed", func(pl redis.Pipeliner, key string) []string {
				for i, r := range rows {
					pl.HSet(ctx, key, strconv.Itoa(i+1), strings.Join(r, "|"))
				}
				return []string{key}
			}},
			{"fields", func(pl redis.Pipeliner, key string) []string {
				for i, r := range rows {
					for j, v := range r {
						pl.HSet(ctx, key, fmt.Sprintf("%d.%s", i+1, fields[j]), v)
					}
				}
				return []string{key}
			}},
			{"hash each", func(pl redis.Pipeliner, key string) []string {
				var keys []string
				for i, r := range rows {
					k := fmt.Sprintf("%s:%d", key, i+1)
					for j, v := range r {
						pl.HSet(ctx, k, fields[j], v)
					}
					keys = append(keys, k)
				}
				return keys
			}},
		}
		for _, l := range layouts {
			b.Run(kind+"/"+l.name, func(b *testing.B) {
				pl := rdb.Pipeline()
				keys := l.write(pl, p+"{u1}:"+kind+":"+l.name)
				if _, err := pl.Exec(ctx); err != nil {
					b.Fatal(err)
				}
				var total int64
				for b.Loop() {
					total = 0
					for _, k := range keys {
						total += rdb.MemoryUsage(ctx, k, 0).Val()
					}
				}
				b.ReportMetric(float64(total)/notes, "B/notification")
			})
		}
	}
}
