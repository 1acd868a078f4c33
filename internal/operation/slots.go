package operation

import (
	"context"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/socialgw/gateway/internal/gqlguard"
)

// Slots cap the queries and mutations executing at once in the process,
// whatever carried them: at most n at once, of which a quarter with
// large responses, so that a flood of heavy ones leaves most slots to
// ordinary operations and bounds the memory their responses take
// together. An operation waits up to wait for its slots.
type Slots struct {
	// slots hold the operations executing; heavy ones (IsHeavy) also hold
	// one of heavy. nil: no cap.
	slots, heavy chan struct{}
	wait         time.Duration

	inflight atomic.Int64
	// dirty records a burst (a large response, a full queue) since memory
	// was last handed back to the OS.
	dirty    atomic.Bool
	freeing  atomic.Bool
	lastFree atomic.Int64
}

// NewSlots returns slots for n operations at once (0: no cap).
func NewSlots(n int, wait time.Duration) *Slots {
	s := &Slots{wait: wait}
	if n > 0 {
		s.slots = make(chan struct{}, n)
		s.heavy = make(chan struct{}, max(1, n/4))
	}
	return s
}

// heavyBytes is the estimated response size from which an operation
// takes a heavy slot: the reference timeline query is estimated at 150 KB.
const heavyBytes = 1 << 20

// IsHeavy reports whether a document's estimated response takes a heavy
// slot.
func IsHeavy(r gqlguard.Report) bool { return r.ResponseBytes > heavyBytes }

// Lease is what an admitted operation holds until its work ends (not
// merely until it is answered: an operation past its deadline keeps its
// slots until its goroutine returns, so abandoned work still counts
// against the cap).
type Lease struct {
	s     *Slots
	lanes []chan struct{}
}

// Acquire takes a slot, and a heavy one first when heavy, waiting up to
// the slots' wait in all; false when none came in time or ctx ended.
func (s *Slots) Acquire(ctx context.Context, heavy bool) (*Lease, bool) {
	l := s.Track()
	if s.slots == nil {
		return l, true
	}
	if heavy {
		l.lanes = append(l.lanes, s.heavy)
	}
	l.lanes = append(l.lanes, s.slots)
	t := time.NewTimer(s.wait)
	defer t.Stop()
	for i, lane := range l.lanes {
		select {
		case lane <- struct{}{}:
			continue
		default:
		}
		select {
		case lane <- struct{}{}:
			continue
		case <-t.C:
		case <-ctx.Done():
		}
		l.lanes = l.lanes[:i]
		l.Release()
		return nil, false
	}
	return l, true
}

// Track counts work that takes no slot (a refused document's answer) as
// in flight, for handing memory back after a burst.
func (s *Slots) Track() *Lease {
	s.inflight.Add(1)
	return &Lease{s: s}
}

// Burst records a burst (a large response, a full queue): once nothing is
// in flight, memory is handed back to the OS.
func (s *Slots) Burst() { s.dirty.Store(true) }

// Release frees the lease's slots and ends its work.
func (l *Lease) Release() {
	for _, lane := range l.lanes {
		<-lane
	}
	l.lanes = nil
	l.s.done()
}

// done ends a piece of work; the last one of a burst hands the memory it
// used back to the OS, a second later if nothing else has started by
// then. Go's scavenger would return it too, but over minutes: a process
// that keeps a burst's peak looks like a leak to the orchestrator and
// leaves less room for the next burst.
func (s *Slots) done() {
	if s.inflight.Add(-1) != 0 || !s.dirty.Load() {
		return
	}
	if !s.freeing.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(time.Second, func() {
		defer s.freeing.Store(false)
		if s.inflight.Load() != 0 || time.Since(time.Unix(0, s.lastFree.Load())) < 5*time.Second {
			return
		}
		s.dirty.Store(false)
		s.lastFree.Store(time.Now().UnixNano())
		debug.FreeOSMemory()
	})
}
