package operation

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"
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
	costly := cap(s.costly)
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
