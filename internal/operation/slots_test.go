package operation

import (
	"context"
	"testing"
	"time"
)

func TestSlots(t *testing.T) {
	s := NewSlots(4, 20*time.Millisecond) // 4 slots, 1 of them heavy
	ctx := context.Background()
	heavy, ok := s.Acquire(ctx, true)
	if !ok {
		t.Fatal("a first heavy operation waits")
	}
	if _, ok := s.Acquire(ctx, true); ok {
		t.Fatal("a second heavy operation got the one heavy slot")
	}
	var light []*Lease
	for range 3 {
		l, ok := s.Acquire(ctx, false)
		if !ok {
			t.Fatal("an ordinary operation waits while slots are free")
		}
		light = append(light, l)
	}
	if _, ok := s.Acquire(ctx, false); ok {
		t.Fatal("a fifth operation got one of 4 slots")
	}
	heavy.Release()
	if l, ok := s.Acquire(ctx, false); !ok {
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
	if _, ok := NewSlots(1, time.Hour).Acquire(cancelled, false); !ok {
		t.Error("a free slot is refused to a cancelled context")
	}
	if _, ok := NewSlots(0, 0).Acquire(ctx, true); !ok {
		t.Error("no cap refuses")
	}
}
