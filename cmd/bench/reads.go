package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// referenceWants is what the reference query asks of a page, as the
// store's page fetch takes it.
var referenceWants = readplan.PageWants{
	Authors: true, Counts: true, Marks: true, Comments: 3, CommentAuthors: true, Reposts: true, OriginalAuthors: true,
}

// target fetches one reference page for a reader and returns how many
// posts it held.
type target struct {
	name string
	note string
	page func(ctx context.Context, r reader) (int, error)
	// recorded, when set, gives the round trips and commands per page of
	// a target whose traffic the hook does not see (the raw replay).
	recorded *Recorded
}

// postQuery posts a GraphQL request body as the holder of token and
// returns the response, or an error for a status other than 200 or a
// response with errors.
func postQuery(ctx context.Context, client *http.Client, url, token string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || bytes.Contains(b, []byte(`"errors"`)) {
		return nil, fmt.Errorf("%s: status %d: %.300s", url, resp.StatusCode, b)
	}
	return b, nil
}

// storeTarget fetches the reference page from the store directly: the
// page with what the query asks for, in one call.
func storeTarget(store *redisstore.Store) target {
	req := social.PageRequest{First: social.DefaultFirst}
	return target{name: "store", note: "HomePage", page: func(ctx context.Context, r reader) (int, error) {
		p, err := store.HomePage(ctx, r.id, req, referenceWants)
		if err != nil {
			return 0, err
		}
		return len(p.Posts.Items), nil
	}}
}

// ReadResult is one read measurement.
type ReadResult struct {
	Target      string
	Concurrency int
	Pages       int
	Elapsed     time.Duration
	P50, P99    time.Duration
	RoundTrips  float64 // per page
	Commands    float64 // per page
	Allocs      float64 // per page
	Bytes       float64 // per page
	PostsPerPg  float64
	// ProcessCPU and RedisCPU are CPU time per page of the bench process
	// (the path's side and the load generator) and of Redis (0: unknown).
	ProcessCPU, RedisCPU time.Duration
	// HeapGoal is the largest heap size the bench process's GC aimed at
	// during the measurement (runtime.MemStats.NextGC): what GOGC trades.
	HeapGoal uint64
}

// PagesPerSec is the throughput.
func (r ReadResult) PagesPerSec() float64 { return float64(r.Pages) / r.Elapsed.Seconds() }

// CPUBound is the most pages/s the path's CPU per page allows on cores
// cores that nothing else uses: Redis runs commands on one thread, and
// the bench process and Redis share the cores (0: CPU not measured).
func (r ReadResult) CPUBound(cores int) float64 {
	if r.RedisCPU <= 0 || r.ProcessCPU <= 0 {
		return 0
	}
	return min(1/r.RedisCPU.Seconds(), float64(cores)/(r.ProcessCPU+r.RedisCPU).Seconds())
}

// Reads are the read measurements.
type Reads struct {
	Readers   int
	StoreNote string
	Results   []ReadResult
	// Recorded are the gateway's flights replayed by the replay targets
	// (nil on a cluster, where they are not measured); ReplayNote says how
	// the raw replay connects.
	Recorded   *Recorded
	ReplayNote string
}

// Get returns the result of a target at a concurrency.
func (r *Reads) Get(target string, concurrency int) (ReadResult, bool) {
	if r == nil {
		return ReadResult{}, false
	}
	for _, x := range r.Results {
		if x.Target == target && x.Concurrency == concurrency {
			return x, true
		}
	}
	return ReadResult{}, false
}

// readTargets opens the readers' sessions, starts the gateway and returns
// the ways of fetching a reference page: the three paths, then (on a
// single Redis) the gateway's recorded flights replayed raw and through
// go-redis.
func (b *Bench) readTargets(ctx context.Context) ([]reader, []target, error) {
	rs, err := b.readers(ctx, b.cfg.Readers)
	if err != nil {
		return nil, nil, err
	}
	base, err := b.serve()
	if err != nil {
		return nil, nil, err
	}
	addr := strings.TrimPrefix(base, "http://")
	gw, closeGW := rawHTTPTarget("gateway", addr, "/query", b.cfg.Concurrency)
	b.closers = append(b.closers, closeGW)
	ts := []target{gw, storeTarget(b.store)}
	single, ok := b.rdb.(*redis.Client)
	if !ok {
		// A cluster page's flights go to several nodes; the replay would
		// need the slot map. Not measured there.
		return rs, ts, nil
	}
	rec, err := b.recordPages(ctx, rs)
	if err != nil {
		return nil, nil, err
	}
	b.logf("bench: recorded the reference pages of %d readers in %s: %.1f flights, %.1f commands per page, %d overlapping flights",
		rec.Pages, rec.Took.Round(time.Millisecond), rec.Flights, rec.Commands, rec.Overlaps)
	raw, closeRaw, err := rawReplayTarget(ctx, single, rec, b.cfg.Concurrency)
	if err != nil {
		return nil, nil, err
	}
	b.closers = append(b.closers, closeRaw)
	raw.recorded = rec
	return rs, append(ts, raw, goRedisReplayTarget(b.rdb, rec)), nil
}

// measureReads runs the three targets at concurrency 1 and at saturation.
// Each measurement is cut into --rounds slices, and the targets take turns
// slice by slice, so that a change in the machine's load (other processes
// on a shared machine) weighs on the three alike.
func (b *Bench) measureReads(ctx context.Context) (*Reads, error) {
	rs, targets, err := b.readTargets(ctx)
	if err != nil {
		return nil, err
	}
	out := &Reads{Readers: len(rs), StoreNote: targets[1].note}
	for _, t := range targets {
		if t.recorded != nil {
			out.Recorded, out.ReplayNote = t.recorded, t.note
		}
	}
	rounds := b.cfg.Rounds
	slice := b.cfg.Duration / time.Duration(rounds)
	for _, conc := range []int{1, b.cfg.Concurrency} {
		accs := make([]readAcc, len(targets))
		for _, t := range targets {
			if _, _, err := b.load(ctx, t, rs, conc, min(b.cfg.Duration/5, 2*time.Second)); err != nil {
				return nil, fmt.Errorf("%s at concurrency %d: %w", t.name, conc, err)
			}
		}
		for range rounds {
			for i, t := range targets {
				if err := b.measure(ctx, t, rs, conc, slice, &accs[i]); err != nil {
					return nil, fmt.Errorf("%s at concurrency %d: %w", t.name, conc, err)
				}
			}
		}
		for i, t := range targets {
			r := accs[i].result(t.name, conc)
			if rc := t.recorded; rc != nil {
				r.RoundTrips, r.Commands = rc.Flights, rc.Commands
			}
			b.logf("bench: %-15s c=%-3d %8.0f pages/s  p50 %7s  p99 %7s  %5.1f round trips  %6.1f commands  %7.0f allocs  %6.1f KB  CPU %4.0f µs + Redis %4.0f µs per page  heap goal %.0f MB",
				t.name, conc, r.PagesPerSec(), ms(r.P50), ms(r.P99), r.RoundTrips, r.Commands, r.Allocs, r.Bytes/1024, us(r.ProcessCPU), us(r.RedisCPU), float64(r.HeapGoal)/(1<<20))
			out.Results = append(out.Results, r)
		}
	}
	return out, nil
}

// readAcc accumulates the slices of one measurement.
type readAcc struct {
	lat            []time.Duration
	posts          int
	c              counts
	mallocs, bytes uint64
	elapsed        time.Duration
	cpu, redisCPU  time.Duration
	heapGoal       uint64
}

func (a *readAcc) result(target string, conc int) ReadResult {
	n := float64(len(a.lat))
	slices.Sort(a.lat)
	return ReadResult{
		Target: target, Concurrency: conc, Pages: len(a.lat), Elapsed: a.elapsed,
		P50: quantile(a.lat, 0.50), P99: quantile(a.lat, 0.99),
		RoundTrips: float64(a.c.roundTrips) / n, Commands: float64(a.c.commands) / n,
		Allocs: float64(a.mallocs) / n, Bytes: float64(a.bytes) / n, PostsPerPg: float64(a.posts) / n,
		ProcessCPU: a.cpu / time.Duration(len(a.lat)), RedisCPU: a.redisCPU / time.Duration(len(a.lat)),
		HeapGoal: a.heapGoal,
	}
}

// measure fetches pages with conc workers for d and adds what it saw to
// acc.
func (b *Bench) measure(ctx context.Context, t target, rs []reader, conc int, d time.Duration, acc *readAcc) error {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c0 := b.counts()
	redis0 := redisCPU(ctx, b.rdb)
	cpu0 := processCPU()
	start := time.Now()
	lat, posts, err := b.load(ctx, t, rs, conc, d)
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	c := b.counts().since(c0)
	redis := redisCPU(ctx, b.rdb) - redis0
	runtime.ReadMemStats(&m1)
	if err != nil {
		return err
	}
	acc.lat = append(acc.lat, lat...)
	acc.posts += posts
	acc.c = acc.c.plus(c)
	acc.mallocs += m1.Mallocs - m0.Mallocs
	acc.bytes += m1.TotalAlloc - m0.TotalAlloc
	acc.elapsed += elapsed
	acc.cpu += cpu
	acc.redisCPU += redis
	acc.heapGoal = max(acc.heapGoal, m1.NextGC)
	return nil
}

// load runs conc workers fetching pages until d has passed, and returns
// every page's latency and the posts seen. The first error stops it.
func (b *Bench) load(ctx context.Context, t target, rs []reader, conc int, d time.Duration) ([]time.Duration, int, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := time.Now().Add(d)
	var next atomic.Int64
	var posts atomic.Int64
	lats := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 1024)
			for ctx.Err() == nil && time.Now().Before(deadline) {
				r := rs[int(next.Add(1)-1)%len(rs)]
				t0 := time.Now()
				n, err := t.page(ctx, r)
				if err != nil {
					cancel(err)
					break
				}
				lat = append(lat, time.Since(t0))
				posts.Add(int64(n))
			}
			lats[w] = lat
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, 0, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return nil, 0, fmt.Errorf("no page completed in %s", d)
	}
	return all, int(posts.Load()), nil
}

// quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
