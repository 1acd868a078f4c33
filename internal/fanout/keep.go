package fanout

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// XAUTOCLAIM takes an entry by its idle time alone: it cannot tell a job
// still running on a live worker from one whose worker died or whose
// handler failed. So while jobs run, their worker keeps their entries
// fresh (touchScript, every third of MinIdle) and renews its own key: only
// an entry nobody touches for MinIdle, because its worker is gone, stalled,
// or finished it with an error, is claimed by another.

// keeper refreshes the entries of the jobs a worker runs, until stopped.
type keeper struct {
	w    *Worker
	mu   sync.Mutex
	ids  map[string]struct{}
	stop chan struct{}
	done chan struct{}
}

// keep starts refreshing; the caller adds and removes the ids it runs, and
// calls halt when no job runs any more.
func (w *Worker) keep() *keeper {
	k := &keeper{w: w, ids: map[string]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	go k.loop()
	return k
}

func (k *keeper) add(id string) { k.mu.Lock(); k.ids[id] = struct{}{}; k.mu.Unlock() }
func (k *keeper) del(id string) { k.mu.Lock(); delete(k.ids, id); k.mu.Unlock() }
func (k *keeper) halt()         { close(k.stop); <-k.done }

func (k *keeper) loop() {
	defer close(k.done)
	t := time.NewTicker(max(k.w.cfg.MinIdle/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-t.C:
			k.touch()
		}
	}
}

// touch resets the idle time of the running entries still owned by this
// worker. Errors are logged only: an entry left untouched is at worst run
// twice, which handlers allow.
func (k *keeper) touch() {
	k.mu.Lock()
	args := make([]any, 0, len(k.ids)+2)
	args = append(args, k.w.cfg.Group, k.w.cfg.Consumer)
	for id := range k.ids {
		args = append(args, id)
	}
	k.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), max(k.w.cfg.MinIdle/3, time.Second))
	defer cancel()
	if len(args) > 2 {
		if err := touchScript.Run(ctx, k.w.rdb, []string{k.w.cfg.Stream}, args...).Err(); err != nil && ctx.Err() == nil {
			k.w.log.Warn("fan-out: could not refresh running jobs", "err", err)
		}
	}
	if err := k.w.rdb.Set(ctx, k.w.cfg.Alive+k.w.cfg.Consumer, "1", k.w.deadAfter()).Err(); err != nil && ctx.Err() == nil {
		k.w.log.Warn("fan-out: could not renew the worker's key", "err", err)
	}
}

// touchScript resets the idle time of pending entries that this consumer
// still owns. XCLAIM with JUSTID does not count a delivery; checking the
// owner first keeps an entry another worker took (after this one stalled)
// with that worker.
//
// KEYS: stream. ARGV: group, consumer, then the entry ids.
var touchScript = redis.NewScript(`
local n = 0
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    n = n + 1
  end
end
return n
`)
