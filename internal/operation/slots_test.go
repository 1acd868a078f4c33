package operation

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redistest"
)

func TestSlots(t *testing.T) {
	s := NewSlots(4, 20*time.Millisecond) // 4 slots, 1 of them heavy
	ctx := context.Background()
	heavy, ok := s.Acquire(ctx, Demand{Heavy: true})
	if !ok {
		t.Fatal("a first heavy operation waits")
	}
	if _, ok := s.Acquire(ctx, Demand{Heavy: true}); ok {
		t.Fatal("a second heavy operation got the one heavy slot")
	}
	var light []*Lease
	for range 3 {
		l, ok := s.Acquire(ctx, Demand{})
		if !ok {
			t.Fatal("an ordinary operation waits while slots are free")
		}
		light = append(light, l)
	}
	if _, ok := s.Acquire(ctx, Demand{}); ok {
		t.Fatal("a fifth operation got one of 4 slots")
	}
	heavy.Release()
	if l, ok := s.Acquire(ctx, Demand{}); !ok {
		t.Fatal("a slot given back is not taken again")
	} else {
		l.Release()
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, l := range light {
		l.Release()
	}
	if got := s.inflight.Load(); got != 0 {
		t.Errorf("%d in flight once all are released", got)
	}
	if _, ok := NewSlots(1, time.Hour).Acquire(cancelled, Demand{}); !ok {
		t.Error("a free slot is refused to a cancelled context")
	}
	if _, ok := NewSlots(0, 0).Acquire(ctx, Demand{Heavy: true}); !ok {
		t.Error("no cap refuses")
	}
}

// TestSlotsFairShare: one client has at most its share of the slots
// executing (8 of 32) while another client still gets one; costly
// operations take at most half the cores' worth of slots, whoever sends
// them, while ordinary ones still run; a client's share is forgotten
// once nothing refers to it.
func TestSlotsFairShare(t *testing.T) {
	s := NewSlots(32, 20*time.Millisecond)
	ctx := context.Background()
	var held []*Lease
	take := func(d Demand) bool {
		l, ok := s.Acquire(ctx, d)
		if ok {
			held = append(held, l)
		}
		return ok
	}
	for i := range 8 {
		if !take(Demand{Client: "ip:a"}) {
			t.Fatalf("operation %d of a client refused within its share", i)
		}
	}
	if take(Demand{Client: "ip:a"}) {
		t.Error("a client got a ninth slot of 32")
	}
	if !take(Demand{Client: "ip:b"}) {
		t.Error("another client waits for the first's share")
	}
	costly := s.costly.size
	if want := max(1, min(8, runtime.GOMAXPROCS(0)/2)); costly != want {
		t.Errorf("%d costly slots, want %d", costly, want)
	}
	for i := range costly {
		if !take(Demand{Client: "ip:c" + strconv.Itoa(i), Costly: true}) {
			t.Fatalf("costly operation %d refused", i)
		}
	}
	if take(Demand{Client: "ip:d", Costly: true}) {
		t.Error("one more costly operation than the costly slots ran")
	}
	if !take(Demand{Client: "ip:d"}) {
		t.Error("an ordinary operation waits while the costly slots are taken")
	}
	// A costly operation waiting for its slot holds no place of its
	// client's: the client's ordinary operations go on.
	if take(Demand{Client: "ip:e", Costly: true}) {
		t.Error("one more costly operation than the costly slots ran")
	}
	for i := range 8 {
		if !take(Demand{Client: "ip:e"}) {
			t.Fatalf("ordinary operation %d of a client whose costly one waited: refused", i)
		}
	}
	for _, l := range held {
		l.Release()
	}
	if len(s.clients) != 0 || s.inflight.Load() != 0 {
		t.Errorf("%d client shares, %d in flight once all are released", len(s.clients), s.inflight.Load())
	}
}

// TestFairLane: a client holds at most half of a lane (at least one
// place); a place given back goes to the waiting client that holds
// fewest, whatever the order of arrival, so that one client's many
// waiting operations do not pass another client's one.
func TestFairLane(t *testing.T) {
	ctx := context.Background()
	never := make(chan time.Time)
	wide := newFairLane(4)
	for i := range 2 {
		if !wide.take(ctx, "a", never) {
			t.Fatalf("place %d of a refused", i)
		}
	}
	expired := make(chan time.Time, 1)
	expired <- time.Now()
	if wide.take(ctx, "a", expired) {
		t.Error("a client took more than half of the lane")
	}
	if !wide.take(ctx, "b", never) {
		t.Error("another client waits while the lane has room")
	}

	one := newFairLane(1)
	if !one.take(ctx, "a", never) {
		t.Fatal("a free place refused")
	}
	got := make(chan string, 8)
	wait := func(client string) {
		n := one.waitingOf(client)
		go func() {
			if one.take(ctx, client, never) {
				got <- client
			}
		}()
		redistest.Eventually(t, 5*time.Second, "one more operation of "+client+" waiting", func() bool { return one.waitingOf(client) > n })
	}
	for range 3 {
		wait("a")
	}
	wait("b")
	one.give("a")
	holder := <-got
	if holder != "b" {
		t.Errorf("the place went to %s, with b waiting and holding none", holder)
	}
	for range 3 {
		one.give(holder)
		holder = <-got
	}
	one.give(holder)
	one.mu.Lock()
	defer one.mu.Unlock()
	if one.held != 0 || len(one.clients) != 0 || len(one.waiting) != 0 {
		t.Errorf("%d held, %d clients, %d waiting once all gave back", one.held, len(one.clients), len(one.waiting))
	}
}

// waitingOf is how many operations of client wait for the lane.
func (l *fairLane) waitingOf(client string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.clients[client]; c != nil {
		return c.waiters
	}
	return 0
}
