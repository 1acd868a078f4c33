package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// BenchmarkLikeMemory measures what a like costs in Redis's memory: the
// bytes (MEMORY USAGE, SAMPLES 0) of a post's PostViewers and of its
// Likers, divided by the likes, for posts of 10, 100 (listpack
// encodings) and 1 000 likes (hashtable and skiplist). docs/data-model.md
// quotes the figures:
//
//	go test -run '^$' -bench LikeMemory ./internal/redisstore
func BenchmarkLikeMemory(b *testing.B) {
	rdb := redistest.Client(b)
	s := redisstore.New(rdb, redistest.Prefix(b))
	ctx := context.Background()
	author := graphUsers(b, s, 1)[0]
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("%d likes", n), func(b *testing.B) {
			p, err := s.CreatePost(ctx, author, social.NewPost{Content: "liked"})
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				// Liker ids as a deployment of a million users has them.
				if err := s.Like(ctx, strconv.Itoa(1_000_000+i), p.ID); err != nil {
					b.Fatal(err)
				}
			}
			k := s.Keys()
			var viewers, likers int64
			for b.Loop() {
				viewers = rdb.MemoryUsage(ctx, k.PostViewers(p.ID), 0).Val()
				likers = rdb.MemoryUsage(ctx, k.Likers(p.ID), 0).Val()
			}
			b.ReportMetric(float64(viewers)/float64(n), "viewers-B/like")
			b.ReportMetric(float64(likers)/float64(n), "likers-B/like")
		})
	}
}

// BenchmarkPackedCommentsMemory measures what the packed comments (cm)
// add to a post hash: MEMORY USAGE of the hash of a post with four
// comments of 20 and of 200 characters, and of the same post without
// comments (no cm).
func BenchmarkPackedCommentsMemory(b *testing.B) {
	rdb := redistest.Client(b)
	s := redisstore.New(rdb, redistest.Prefix(b))
	ctx := context.Background()
	users := graphUsers(b, s, 2)
	for _, size := range []int{20, 200} {
		b.Run(fmt.Sprintf("%d characters", size), func(b *testing.B) {
			p, err := s.CreatePost(ctx, users[0], social.NewPost{Content: "a post of a usual length, some forty"})
			if err != nil {
				b.Fatal(err)
			}
			for i := range 4 {
				text := fmt.Sprintf("%0*d", size, i)
				if _, err := s.AddComment(ctx, users[1], p.ID, text); err != nil {
					b.Fatal(err)
				}
			}
			key := s.Keys().Post(p.ID)
			var with, without int64
			for b.Loop() {
				with = rdb.MemoryUsage(ctx, key, 0).Val()
			}
			// The same post with no comments, whose hash has no cm.
			bare, err := s.CreatePost(ctx, users[0], social.NewPost{Content: "a post of a usual length, some forty"})
			if err != nil {
				b.Fatal(err)
			}
			without = rdb.MemoryUsage(ctx, s.Keys().Post(bare.ID), 0).Val()
			b.ReportMetric(float64(with), "hash-B")
			b.ReportMetric(float64(without), "without-cm-B")
		})
	}
}
