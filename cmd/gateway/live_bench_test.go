package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// Live-timeline benchmarks (docs/performance.md has a run): a gateway
// process of its own on a redis-server of its own, and websocket
// subscribers (graphql-transport-ws) in this process.
//
//	go test -run '^$' -bench Live -benchtime 20x ./cmd/gateway
//
// BenchmarkLiveLatency: createPost answered → event at each subscriber,
// p50 and p99 over every subscriber and post. BenchmarkLiveFanout10000:
// one post to 10 000 subscribers on one gateway, until the last has it.
// BenchmarkLiveIdleMemory: the gateway's heap and stacks per idle
// subscriber.

// liveEvent is a post received by subscriber client at a time.
type liveEvent struct {
	client int
	post   string
	at     time.Time
}

// benchSubscribers follows author with n new users and subscribes each over
// a websocket to gw; every event goes to events.
func benchSubscribers(b *testing.B, f *liveFixture, gw *gatewayProcess, author liveUser, n int, events chan<- liveEvent) {
	b.Helper()
	ctx := context.Background()
	had := metrics(b, gw)["gateway_live_subscribers"]
	users := make([]liveUser, n)
	for i := range users {
		users[i] = f.user(b, "sub")
	}
	// Follows through the store, 16 at a time.
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for _, u := range users {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if author.id != "" {
				if err := f.admin.Store.Follow(ctx, u.id, author.id); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	url := "ws" + strings.TrimPrefix(gw.url, "http") + "/query"
	q, _ := json.Marshal(map[string]string{"query": `subscription { timelineUpdated { id } }`})
	for i, u := range users {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
			if err != nil {
				b.Error(err)
				return
			}
			c.SetReadLimit(1 << 20)
			b.Cleanup(func() { c.CloseNow() })
			init := map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + u.token}}
			sub := map[string]any{"id": "1", "type": "subscribe", "payload": json.RawMessage(q)}
			if wsjson.Write(ctx, c, init) != nil || wsjson.Write(ctx, c, sub) != nil {
				b.Error("websocket write failed")
				return
			}
			go func() {
				for {
					var m struct {
						Type    string `json:"type"`
						Payload struct {
							Data struct {
								TimelineUpdated struct{ ID string } `json:"timelineUpdated"`
							} `json:"data"`
						} `json:"payload"`
					}
					if err := wsjson.Read(ctx, c, &m); err != nil {
						return
					}
					if m.Type == "ping" { // unanswered, the server closes the connection
						_ = wsjson.Write(ctx, c, map[string]string{"type": "pong"})
					}
					if m.Type == "next" {
						events <- liveEvent{client: i, post: m.Payload.Data.TimelineUpdated.ID, at: time.Now()}
					}
				}
			}()
		}()
	}
	wg.Wait()
	waitMetric(b, gw, "gateway_live_subscribers", had+float64(n))
}

// metrics reads the gateway's /metrics as name → value (unlabelled only).
func metrics(b *testing.B, gw *gatewayProcess) map[string]float64 {
	b.Helper()
	resp, err := http.Get(gw.url + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[name] = f
		}
	}
	return out
}

func waitMetric(b *testing.B, gw *gatewayProcess, name string, want float64) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		got := metrics(b, gw)[name]
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s = %v, want %v", name, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// postAndCollect posts as author and waits until n subscribers had it;
// it returns the time createPost was answered and the arrival times.
func postAndCollect(b *testing.B, gw *gatewayProcess, author liveUser, n int, events <-chan liveEvent) (time.Time, []time.Time) {
	b.Helper()
	r := gatewaytest.Post(b, gw.url, author.token, `mutation { createPost(input: {content: "bench"}) { id } }`, nil)
	answered := time.Now()
	id := r.Str("createPost.id")
	if id == "" {
		b.Fatalf("createPost: %+v", r.Errors)
	}
	got := make([]time.Time, 0, n)
	timeout := time.After(2 * time.Minute)
	for len(got) < n {
		select {
		case e := <-events:
			if e.post == id {
				got = append(got, e.at)
			}
		case <-timeout:
			b.Fatalf("post %s reached %d of %d subscribers in 2 minutes", id, len(got), n)
		}
	}
	return answered, got
}

func BenchmarkLiveLatency(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			f := newRedisFixture(b, time.Hour)
			gw := startGatewayProcess(b, f.env)
			author := f.user(b, "author")
			events := make(chan liveEvent, 4*n)
			benchSubscribers(b, f, gw, author, n, events)
			var lat []time.Duration
			b.ResetTimer()
			for range b.N {
				answered, got := postAndCollect(b, gw, author, n, events)
				for _, at := range got {
					lat = append(lat, max(0, at.Sub(answered)))
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(pct(1), "max-ms")
		})
	}
}

func BenchmarkLiveFanout10000(b *testing.B) {
	const n = 10000
	f := newRedisFixture(b, time.Hour)
	// The author has exactly the default celebrity threshold of followers:
	// pushed, one delivery and one announcement per follower.
	gw := startGatewayProcess(b, f.env)
	author := f.user(b, "author")
	events := make(chan liveEvent, 2*n)
	benchSubscribers(b, f, gw, author, n, events)
	var last, first []time.Duration
	b.ResetTimer()
	for range b.N {
		answered, got := postAndCollect(b, gw, author, n, events)
		slices.SortFunc(got, func(x, y time.Time) int { return x.Compare(y) })
		first = append(first, got[0].Sub(answered))
		last = append(last, got[len(got)-1].Sub(answered))
	}
	b.StopTimer()
	slices.Sort(last)
	slices.Sort(first)
	b.ReportMetric(float64(first[len(first)/2].Milliseconds()), "first-ms")
	b.ReportMetric(float64(last[len(last)/2].Milliseconds()), "all-ms")
}

func BenchmarkLiveIdleMemory(b *testing.B) {
	const n = 1000
	f := newRedisFixture(b, time.Hour)
	// GOGC=10 collects often, so the in-use heap stays close to the live
	// heap that the subscribers hold.
	env := map[string]string{"GOGC": "10"}
	for k, v := range f.env {
		env[k] = v
	}
	gw := startGatewayProcess(b, env)
	events := make(chan liveEvent, n)
	settle := func() map[string]float64 {
		time.Sleep(3 * time.Second)
		return metrics(b, gw)
	}
	// One subscriber first, so what the first one starts lazily is not
	// counted per subscriber.
	benchSubscribers(b, f, gw, liveUser{}, 1, events)
	before := settle()
	benchSubscribers(b, f, gw, liveUser{}, n, events)
	waitMetric(b, gw, "gateway_live_subscribers", n+1)
	after := settle()
	per := func(name string) float64 { return (after[name] - before[name]) / n }
	b.ReportMetric(per("go_memstats_heap_inuse_bytes")+per("go_memstats_stack_inuse_bytes"), "heap+stack-B/sub")
	b.ReportMetric(per("go_memstats_heap_inuse_bytes"), "heap-B/sub")
	b.ReportMetric(per("go_memstats_stack_inuse_bytes"), "stack-B/sub")
	b.ReportMetric(per("process_resident_memory_bytes"), "rss-B/sub")
	b.ReportMetric(per("go_goroutines"), "goroutines/sub")
	for range b.N {
	}
}
