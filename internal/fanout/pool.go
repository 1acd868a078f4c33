package fanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Queue names one shard of a sharded job queue: its stream and its
// dead-letter stream, both in one hash slot.
type Queue struct {
	Stream, Dead string
	// Alive prefixes the keys by which the shard's workers show they live
	// (Config.Alive).
	Alive string
}

// Pool consumes a queue sharded over several streams, one Worker per
// shard. A stream lives in one Redis Cluster slot, so one stream is one
// master's work; shards with different hash tags spread the queue, its
// consumer groups, pending lists, claims and dead letters over the
// masters. Every process runs a Pool over all the shards: each shard's
// consumer group hands an entry to exactly one of the processes' consumers,
// so adding processes adds throughput without delivering a job twice
// (beyond the at-least-once retries of a single stream).
type Pool struct {
	workers []*Worker
	cfg     Config
}

// NewPool returns a pool over queues with cfg's tuning (its Stream and
// Dead are ignored) and, per shard, cfg.Concurrency jobs at once; log may
// be nil.
func NewPool(rdb redis.UniversalClient, cfg Config, queues []Queue, handle Handler, log *slog.Logger) (*Pool, error) {
	if len(queues) == 0 {
		return nil, errors.New("fanout: a pool needs at least one queue")
	}
	p := &Pool{}
	for i, q := range queues {
		c := cfg
		c.Stream, c.Dead, c.Alive = q.Stream, q.Dead, q.Alive
		if i > 0 {
			// One consumer name for the process in every shard's group.
			c.Consumer = p.workers[0].cfg.Consumer
		}
		w, err := New(rdb, c, handle, log)
		if err != nil {
			return nil, fmt.Errorf("shard %d: %w", i, err)
		}
		p.workers = append(p.workers, w)
	}
	p.cfg = p.workers[0].cfg
	return p, nil
}

// Config returns the pool's tuning with its defaults filled in, and the
// first shard's streams.
func (p *Pool) Config() Config { return p.cfg }

// Shards returns the number of shards.
func (p *Pool) Shards() int { return len(p.workers) }

// Stats returns the sum of the shards' counters.
func (p *Pool) Stats() Stats {
	var s Stats
	for _, w := range p.workers {
		ws := w.Stats()
		s.Processed += ws.Processed
		s.Failed += ws.Failed
		s.Claimed += ws.Claimed
		s.DeadLettered += ws.DeadLettered
	}
	return s
}

// Run runs every shard's worker until ctx is cancelled, and returns when
// all have stopped (see Worker.Run).
func (p *Pool) Run(ctx context.Context) error {
	errs := make([]error, len(p.workers))
	var wg sync.WaitGroup
	for i, w := range p.workers {
		wg.Go(func() { errs[i] = w.Run(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Drain drains the shards in turn until a whole pass finds nothing, and
// returns how many jobs it handled (see Worker.Drain).
func (p *Pool) Drain(ctx context.Context) (int, error) {
	total := 0
	for {
		pass := 0
		for _, w := range p.workers {
			n, err := w.Drain(ctx)
			pass += n
			if err != nil {
				return total + pass, err
			}
		}
		total += pass
		if pass == 0 {
			return total, nil
		}
	}
}

// BacklogAll returns the number of entries in the queues' streams (jobs
// queued or pending: acknowledged ones are deleted) and in their
// dead-letter streams, with one pipeline (one round, split per node on
// Redis Cluster).
func BacklogAll(ctx context.Context, rdb redis.UniversalClient, queues []Queue) (queued, deadLettered int64, err error) {
	q := make([]*redis.IntCmd, len(queues))
	d := make([]*redis.IntCmd, len(queues))
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, s := range queues {
			q[i], d[i] = p.XLen(ctx, s.Stream), p.XLen(ctx, s.Dead)
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("stream lengths: %w", err)
	}
	for i := range queues {
		queued += q[i].Val()
		deadLettered += d[i].Val()
	}
	return queued, deadLettered, nil
}
