package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// BenchmarkHomeLaterPages measures 11 pages of 20 posts from the top of
// home timelines, past the fold window (the pages after the first fold
// against the entries above them): the time of a page and the CPU time
// Redis spends on it (redis-µs/page, from INFO cpu; run it alone, as the
// server is the package's), with the gateway's post cache and without. A
// tenth of the posts are plain reposts of recent ones. docs/performance.md
// quotes the figures.
func BenchmarkHomeLaterPages(b *testing.B) {
	const readers, authors, posts, first, pages = 20, 40, 3000, 20, 11
	s, rdb := feedStore(b, feedConfig(redisstore.Push))
	w := feedWorker(b, s, rdb)
	ctx := context.Background()
	u := feedUsers(b, s, readers+authors)
	rs, as := u[:readers], u[readers:]
	r := rand.New(rand.NewPCG(3, 4))
	for _, reader := range rs {
		for _, a := range as {
			if r.IntN(2) == 0 {
				feedOK(b, s.Follow(ctx, reader, a))
			}
		}
	}
	var originals []string
	for i := range posts {
		a := as[r.IntN(len(as))]
		if i > 100 && r.IntN(10) == 0 {
			if _, err := s.CreatePost(ctx, a, social.NewPost{RepostOf: originals[len(originals)-1-r.IntN(100)]}); err != nil {
				b.Fatal(err)
			}
			continue
		}
		originals = append(originals, feedPost(b, s, a, social.NewPost{Content: fmt.Sprint("post ", i)}).ID)
	}
	drain(b, w)
	feedOK(b, s.LoadScripts(ctx))
	walk := func() {
		for _, reader := range rs {
			after := ""
			for range pages {
				c, err := homeIDs(ctx, s, reader, social.PageRequest{First: first, After: after})
				if err != nil {
					b.Fatal(err)
				}
				after = c.EndCursor()
			}
		}
	}
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprint("cached=", cached), func(b *testing.B) {
			if cached {
				s.CachePosts(10_000)
				walk() // warm
			}
			before := redisCPU(b, rdb)
			for b.Loop() {
				walk()
			}
			n := float64(b.N * readers * pages)
			b.ReportMetric((redisCPU(b, rdb)-before)*1e6/n, "redis-µs/page")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/n, "µs/page")
		})
	}
}
