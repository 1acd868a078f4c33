// Package fanout is the reliable job queue behind home-timeline fan-out: a
// Redis Stream read by a consumer group, with at-least-once delivery.
//
// A worker reads new entries with XREADGROUP, runs the handler on each and
// acknowledges it (XACK, then XDEL) only when the handler succeeded. An
// entry whose worker died, or whose handler failed, stays in the group's
// pending list; after MinIdle any worker claims it (XAUTOCLAIM) and runs
// it again, so the handler must be idempotent. A job still running is
// never claimed: its worker keeps its entry fresh (keep.go). An entry delivered more
// than MaxDeliveries times is moved to a dead-letter stream and counted.
//
// The package knows nothing of posts or timelines: the jobs are string
// maps, and what they mean is the handler's business.
package fanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Handler carries out one job. An error leaves the job pending, to be
// retried after MinIdle.
type Handler func(ctx context.Context, job map[string]string) error

// Config tunes a Worker. Zero values take the defaults below.
type Config struct {
	Stream string // the job stream (required)
	Dead   string // the dead-letter stream (required)
	Group  string // the consumer group, default "fanout"
	// Consumer names this worker within the group; it must be unique among
	// the workers running at once (default: host-pid-random).
	Consumer string
	// Alive prefixes the keys by which workers show they live: each
	// renews Alive+Consumer, with a TTL of the dead-worker bound (default
	// Stream + ":alive:"; keep it in the stream's slot on Redis Cluster).
	Alive string

	Read          int           // entries per read, default 16
	Block         time.Duration // how long a read waits for new entries, default 1s; also bounds how long shutdown waits for a read
	MinIdle       time.Duration // a pending entry idle this long is claimed, default 30s
	ClaimEvery    time.Duration // how often to look for such entries, default MinIdle/2
	MaxDeliveries int           // deliveries before an entry goes to the dead-letter stream, default 5
	Concurrency   int           // jobs run at once, default 4
	JobTimeout    time.Duration // the longest one job may run, default 2m
	DeadMaxLen    int64         // the dead-letter stream is trimmed to about this many entries, default 100000
}

// Defaults of Config.
const (
	DefaultGroup         = "fanout"
	DefaultRead          = 16
	DefaultBlock         = time.Second
	DefaultMinIdle       = 30 * time.Second
	DefaultMaxDeliveries = 5
	DefaultConcurrency   = 4
	DefaultJobTimeout    = 2 * time.Minute
	DefaultDeadMaxLen    = 100000
)

func (c Config) withDefaults() (Config, error) {
	if c.Stream == "" || c.Dead == "" {
		return c, errors.New("fanout: stream and dead-letter stream are required")
	}
	if c.Group == "" {
		c.Group = DefaultGroup
	}
	if c.Consumer == "" {
		c.Consumer = DefaultConsumer()
	}
	if c.Alive == "" {
		c.Alive = c.Stream + ":alive:"
	}
	set := func(p *int, def int) {
		if *p <= 0 {
			*p = def
		}
	}
	setD := func(p *time.Duration, def time.Duration) {
		if *p <= 0 {
			*p = def
		}
	}
	set(&c.Read, DefaultRead)
	set(&c.MaxDeliveries, DefaultMaxDeliveries)
	set(&c.Concurrency, DefaultConcurrency)
	setD(&c.Block, DefaultBlock)
	setD(&c.MinIdle, DefaultMinIdle)
	setD(&c.ClaimEvery, c.MinIdle/2)
	setD(&c.JobTimeout, DefaultJobTimeout)
	if c.DeadMaxLen <= 0 {
		c.DeadMaxLen = DefaultDeadMaxLen
	}
	return c, nil
}

// Stats are a worker's counters since it started.
type Stats struct {
	Processed    int64 // jobs handled and acknowledged
	Failed       int64 // handler runs that failed (the job stays pending)
	Claimed      int64 // stale pending entries taken over from any consumer
	DeadLettered int64 // jobs moved to the dead-letter stream
}

// Worker consumes a job stream. Run it with Run; Drain serves tests and
// tools that want everything queued handled before they go on. Run and
// Drain must not run at the same time on one Worker (make two workers).
type Worker struct {
	rdb    redis.UniversalClient
	cfg    Config
	handle Handler
	log    *slog.Logger

	processed, failed, claimed, dead atomic.Int64

	// Run and Drain use these from one goroutine at a time.
	groupReady bool
	nextClaim  time.Time
	nextBeat   time.Time
}

// New returns a worker; log may be nil.
func New(rdb redis.UniversalClient, cfg Config, handle Handler, log *slog.Logger) (*Worker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Worker{rdb: rdb, cfg: cfg, handle: handle, log: log.With("consumer", cfg.Consumer)}, nil
}

// Config returns the worker's configuration with its defaults filled in.
func (w *Worker) Config() Config { return w.cfg }

// Stats returns the worker's counters.
func (w *Worker) Stats() Stats {
	return Stats{Processed: w.processed.Load(), Failed: w.failed.Load(), Claimed: w.claimed.Load(), DeadLettered: w.dead.Load()}
}

// Run consumes jobs until ctx is cancelled, then returns once the jobs it
// is running have finished (each within JobTimeout): a job is never cut
// off by shutdown, and one cut off by a crash is claimed by another
// worker. Redis errors are logged and retried with a backoff; Run returns
// an error only for a configuration Redis refuses.
func (w *Worker) Run(ctx context.Context) error {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		_, err := w.round(ctx, w.cfg.Block)
		if err == nil {
			backoff = 100 * time.Millisecond
			continue
		}
		if ctx.Err() != nil {
			break
		}
		w.log.Warn("fan-out worker: redis error, retrying", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	w.log.Info("fan-out worker stopped", "processed", w.processed.Load(), "dead_lettered", w.dead.Load())
	return nil
}

// Drain handles every job queued now, and every pending job idle for at
// least MinIdle, then returns how many it handled. Jobs whose handler
// fails stay pending (Drain does not retry them before MinIdle). Tests use
// it to wait for fan-out without sleeping.
func (w *Worker) Drain(ctx context.Context) (int, error) {
	total := 0
	w.nextClaim = time.Time{}
	for {
		n, err := w.round(ctx, -1)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// round claims stale entries when it is time to, reads new ones (waiting
// up to block; negative: not at all), and handles them. It returns how
// many entries it took.
func (w *Worker) round(ctx context.Context, block time.Duration) (int, error) {
	n, err := w.step(ctx, block)
	if err != nil && redis.HasErrorPrefix(err, "NOGROUP") {
		// The stream or its group is gone (FLUSHALL, a Redis that came back
		// empty, a failover to a replica that lacked them): whichever
		// command found out, the next round makes them again.
		w.groupReady = false
	}
	return n, err
}

func (w *Worker) step(ctx context.Context, block time.Duration) (int, error) {
	if err := w.ensureGroup(ctx); err != nil {
		return 0, err
	}
	if err := w.beat(ctx); err != nil {
		return 0, err
	}
	var msgs []redis.XMessage
	if now := time.Now(); !now.Before(w.nextClaim) {
		claimed, err := w.claimStale(ctx)
		if err != nil {
			return 0, err
		}
		if err := w.pruneConsumers(ctx); err != nil {
			return 0, err
		}
		w.nextClaim = now.Add(w.cfg.ClaimEvery)
		msgs = claimed
	}
	if len(msgs) == 0 {
		res, err := w.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: w.cfg.Group, Consumer: w.cfg.Consumer, Streams: []string{w.cfg.Stream, ">"},
			Count: int64(w.cfg.Read), Block: block,
		}).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return 0, fmt.Errorf("read jobs: %w", err)
		}
		for _, s := range res {
			msgs = append(msgs, s.Messages...)
		}
	}
	w.handleAll(ctx, msgs)
	return len(msgs), nil
}

// ensureGroup creates the stream and the group once. The group starts at
// the stream's beginning ("0"), so jobs queued before any worker ran are
// not lost.
func (w *Worker) ensureGroup(ctx context.Context) error {
	if w.groupReady {
		return nil
	}
	err := w.rdb.XGroupCreateMkStream(ctx, w.cfg.Stream, w.cfg.Group, "0").Err()
	if err != nil && !redis.HasErrorPrefix(err, "BUSYGROUP") {
		return fmt.Errorf("create consumer group: %w", err)
	}
	w.groupReady = true
	return nil
}

// claimStale takes over pending entries idle for MinIdle (their worker
// died, or their handler failed), up to Read of them, and moves those
// delivered too often to the dead-letter stream. It returns the others,
// to be handled again.
func (w *Worker) claimStale(ctx context.Context) ([]redis.XMessage, error) {
	msgs, _, err := w.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: w.cfg.Stream, Group: w.cfg.Group, Consumer: w.cfg.Consumer,
		MinIdle: w.cfg.MinIdle, Start: "0-0", Count: int64(w.cfg.Read),
	}).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("claim stale jobs: %w", err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	w.claimed.Add(int64(len(msgs)))
	// Delivery counts: XAUTOCLAIM counted this claim as one more.
	pending, err := w.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
		Stream: w.cfg.Stream, Group: w.cfg.Group, Consumer: w.cfg.Consumer,
		Start: msgs[0].ID, End: msgs[len(msgs)-1].ID, Count: int64(len(msgs)) + 1024,
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("read delivery counts: %w", err)
	}
	count := make(map[string]int64, len(pending))
	for _, p := range pending {
		count[p.ID] = p.RetryCount
	}
	keep := msgs[:0]
	for _, m := range msgs {
		if n := count[m.ID]; n > int64(w.cfg.MaxDeliveries) {
			if err := w.deadLetter(ctx, m, n); err != nil {
				return nil, err
			}
			continue
		}
		keep = append(keep, m)
	}
	return keep, nil
}

// pruneConsumers removes from the group the consumers of workers that
// died. Liveness is what a worker renews itself (beat): its key expires
// deadAfter after the last renewal. XINFO's idle time cannot serve: before
// Redis 7.2 a blocking read that returns nothing does not reset it, and
// two idle live workers took each other for dead. The idle time is only a
// first filter (a consumer seen recently is alive). Removal checks that
// the key is gone and that the consumer owns no pending entry in one
// script: an entry handed to it between a check and a delete would lose
// its pending entry, and could never be claimed again. Without pruning
// every crashed or restarted worker would stay listed for ever.
func (w *Worker) pruneConsumers(ctx context.Context) error {
	consumers, err := w.rdb.XInfoConsumers(ctx, w.cfg.Stream, w.cfg.Group).Result()
	if err != nil {
		return fmt.Errorf("list consumers: %w", err)
	}
	for _, c := range consumers {
		if c.Name == w.cfg.Consumer || c.Pending > 0 || c.Idle < w.deadAfter() {
			continue
		}
		removed, err := removeDeadScript.Run(ctx, w.rdb, []string{w.cfg.Stream, w.cfg.Alive + c.Name}, w.cfg.Group, c.Name).Int()
		if err != nil {
			return fmt.Errorf("remove consumer %s: %w", c.Name, err)
		}
		if removed > 0 {
			w.log.Info("fan-out: removed the consumer of a worker that is gone", "gone", c.Name, "idle", c.Idle)
		}
	}
	return nil
}

// removeDeadScript removes a consumer whose worker's key is gone and that
// owns no pending entry, atomically; 1 when it did.
//
// KEYS: stream, the worker's key. ARGV: group, consumer.
var removeDeadScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) > 0 then return 0 end
return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2]) >= 0 and 1 or 0
`)

// beat renews this worker's key, at most every third of deadAfter.
func (w *Worker) beat(ctx context.Context) error {
	now := time.Now()
	if now.Before(w.nextBeat) {
		return nil
	}
	if err := w.rdb.Set(ctx, w.cfg.Alive+w.cfg.Consumer, "1", w.deadAfter()).Err(); err != nil {
		return fmt.Errorf("renew the worker's key: %w", err)
	}
	w.nextBeat = now.Add(w.deadAfter() / 3)
	return nil
}

// deadAfter is how long a consumer may be idle before it counts as gone.
func (w *Worker) deadAfter() time.Duration { return max(2*w.cfg.MinIdle, 10*w.cfg.Block) }

// deadLetterScript moves an entry to the dead-letter stream: it copies the
// entry only when its XACK acknowledged it, so go-redis retrying the
// script never copies it twice.
//
// KEYS: stream, dead-letter stream. ARGV: group, id, max length, then the
// field/value pairs to add.
var deadLetterScript = redis.NewScript(`
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', unpack(ARGV, 4))
redis.call('XDEL', KEYS[1], ARGV[2])
return 1
`)

func (w *Worker) deadLetter(ctx context.Context, m redis.XMessage, deliveries int64) error {
	args := []any{w.cfg.Group, m.ID, w.cfg.DeadMaxLen, "id", m.ID, "deliveries", deliveries}
	for k, v := range m.Values {
		args = append(args, "job."+k, v)
	}
	n, err := deadLetterScript.Run(ctx, w.rdb, []string{w.cfg.Stream, w.cfg.Dead}, args...).Int()
	if err != nil {
		return fmt.Errorf("dead-letter job %s: %w", m.ID, err)
	}
	if n == 1 {
		w.dead.Add(1)
		w.log.Error("fan-out job moved to the dead-letter stream", "id", m.ID, "deliveries", deliveries, "job", m.Values)
	}
	return nil
}

// handleAll runs the jobs, Concurrency at a time, each to its end even
// when ctx is cancelled meanwhile (within JobTimeout).
func (w *Worker) handleAll(ctx context.Context, msgs []redis.XMessage) {
	if len(msgs) == 0 {
		return
	}
	jctx := context.WithoutCancel(ctx)
	k := w.keep()
	defer k.halt()
	sem := make(chan struct{}, w.cfg.Concurrency)
	var wg sync.WaitGroup
	for _, m := range msgs {
		sem <- struct{}{}
		wg.Add(1)
		k.add(m.ID)
		go func() {
			defer func() { k.del(m.ID); <-sem; wg.Done() }()
			w.handleOne(jctx, m)
		}()
	}
	wg.Wait()
}

func (w *Worker) handleOne(ctx context.Context, m redis.XMessage) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.JobTimeout)
	defer cancel()
	job := make(map[string]string, len(m.Values))
	for k, v := range m.Values {
		job[k] = fmt.Sprint(v)
	}
	if err := w.handle(ctx, job); err != nil {
		w.failed.Add(1)
		w.log.Warn("fan-out job failed; it will be retried", "id", m.ID, "err", err)
		return
	}
	// XACK and XDEL are idempotent; a job whose ack is lost is claimed and
	// run again later, which the handler's idempotence makes harmless.
	_, err := w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.XAck(ctx, w.cfg.Stream, w.cfg.Group, m.ID)
		p.XDel(ctx, w.cfg.Stream, m.ID)
		return nil
	})
	if err != nil {
		w.log.Warn("fan-out job done but not acknowledged; it will run again", "id", m.ID, "err", err)
		return
	}
	w.processed.Add(1)
}

// DefaultConsumer is a consumer name unique to this process.
func DefaultConsumer() string {
	host, _ := os.Hostname()
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 36)
}
