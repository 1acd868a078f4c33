package operation

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/socialgw/gateway/internal/gqlguard"
)

// Slots cap the queries and mutations executing at once in the process,
// whatever carried them: at most n at once, of which a quarter with
// large responses, so that a flood of heavy ones leaves most slots to
// ordinary operations and bounds the memory their responses take
// together. They also share the process fairly between clients: one
// client (its user when signed in, else its address) has at most a
// quarter of them (and at least 2) executing at once, so that one
// client's burst cannot take every slot while another waits; and costly
// operations (IsCostly) run at most half as many at once as the process
// has cores, so that however many clients send them, ordinary
// operations always find a core. An operation waits up to wait for all
// of its slots, then is refused.
type Slots struct {
	// slots hold the operations executing (nil: no cap); heavy ones
	// (IsHeavy) also hold a place of heavy, costly ones one of costly,
	// lanes shared fairly between clients (fairLane).
	slots         chan struct{}
	heavy, costly *fairLane
	perClient     int
	wait          time.Duration

	mu      sync.Mutex
	clients map[string]*share

	inflight atomic.Int64
	// dirty records a burst (a large response, a full queue) since memory
	// was last handed back to the OS.
	dirty    atomic.Bool
	freeing  atomic.Bool
	lastFree atomic.Int64
}

// share is one client's slots: its operations executing, and how many
// leases (executing or waiting) refer to it.
type share struct {
	lane chan struct{}
	refs int
}

// NewSlots returns slots for n operations at once (0: no cap).
func NewSlots(n int, wait time.Duration) *Slots {
	s := &Slots{wait: wait, clients: map[string]*share{}}
	if n > 0 {
		s.slots = make(chan struct{}, n)
		s.heavy = newFairLane(max(1, n/4))
		s.costly = newFairLane(max(1, min(n/4, runtime.GOMAXPROCS(0)/2)))
		s.perClient = max(2, n/4)
	}
	return s
}

// heavyBytes is the estimated response size from which an operation
// takes a heavy slot: the reference timeline query is estimated at 150 KB.
const heavyBytes = 1 << 20

// IsHeavy reports whether a document's estimated response takes a heavy
// slot.
func IsHeavy(r gqlguard.Report) bool { return r.ResponseBytes > heavyBytes }

// costlyCost is the estimated cost (COMPLEXITY_LIMIT's measure) from
// which an operation is costly: ten times the reference 20-post page's
// 201. A hundred aliased pages of hidden posts are estimated at 15 200,
// 75 aliased pages of common follows at 12 100.
const costlyCost = 2000

// IsCostly reports whether a document's estimated cost takes a costly
// slot.
func IsCostly(r gqlguard.Report) bool { return r.Cost >= costlyCost }

// Demand is what an operation asks of the slots.
type Demand struct {
	// Client is whom its share is counted against (ClientOf); "": no one.
	Client string
	// Heavy operations (IsHeavy) also take a heavy slot, costly ones
	// (IsCostly) a costly slot.
	Heavy, Costly bool
}

// Lease is what an admitted operation holds until its execution ends
// (not merely until it is answered: an operation past its deadline keeps
// its slots until its goroutine returns, so abandoned work still counts
// against the cap; nor until its answer is read: an answer waiting to be
// written holds no slot).
type Lease struct {
	s      *Slots
	fair   []*fairLane // the heavy and costly places it holds
	lanes  []chan struct{}
	client string // whose share it refers to, "" for none
	who    string // whose places of fair it holds
}

// Acquire takes a costly and a heavy slot when the operation is such
// (its client's fair turn of those lanes), the client's share and a
// slot, in that order (an operation waiting for a costly or heavy slot
// holds no place of its client's, whose ordinary operations go on),
// waiting up to the slots' wait in all; false when they did not all
// come in time or ctx ended.
func (s *Slots) Acquire(ctx context.Context, d Demand) (*Lease, bool) {
	l := s.Track()
	if s.slots == nil {
		return l, true
	}
	t := time.NewTimer(s.wait)
	defer t.Stop()
	l.who = d.Client
	for _, f := range []struct {
		lane *fairLane
		want bool
	}{{s.costly, d.Costly}, {s.heavy, d.Heavy}} {
		if !f.want {
			continue
		}
		if !f.lane.take(ctx, d.Client, t.C) {
			l.Release()
			return nil, false
		}
		l.fair = append(l.fair, f.lane)
	}
	if d.Client != "" {
		l.client = d.Client
		l.lanes = append(l.lanes, s.share(d.Client))
	}
	l.lanes = append(l.lanes, s.slots)
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

// share returns client's lane, counting one more lease that refers to it.
func (s *Slots) share(client string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clients[client]
	if c == nil {
		c = &share{lane: make(chan struct{}, s.perClient)}
		s.clients[client] = c
	}
	c.refs++
	return c.lane
}

// unshare counts one lease less referring to client's lane, forgetting
// the lane when none does.
func (s *Slots) unshare(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.clients[client]; c != nil {
		if c.refs--; c.refs == 0 {
			delete(s.clients, client)
		}
	}
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
	for _, f := range l.fair {
		f.give(l.who)
	}
	l.fair = nil
	for _, lane := range l.lanes {
		<-lane
	}
	l.lanes = nil
	if l.client != "" {
		l.s.unshare(l.client)
		l.client = ""
	}
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
