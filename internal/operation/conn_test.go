package operation

import (
	"log/slog"
	"testing"
	"time"
)

// A connection's read loop reserves a place before each message; an
// operation that claims it keeps it until its answer is written, so at
// most InFlight are held and the loop then waits.
func TestConnReserve(t *testing.T) {
	c := NewConn("192.0.2.1", "", slog.New(slog.DiscardHandler))
	for i := range InFlight {
		if !c.Reserve() {
			t.Fatalf("message %d: no place", i)
		}
		c.claim()
	}
	got := make(chan bool, 1)
	go func() { got <- c.Reserve() }()
	select {
	case <-got:
		t.Fatal("a place beyond InFlight")
	case <-time.After(50 * time.Millisecond):
	}
	<-c.inflight // an answer written
	if !<-got {
		t.Fatal("no place once one was given back")
	}
	// A message that claimed nothing gives its place back at the next read.
	if !c.Reserve() {
		t.Fatal("unclaimed place not given back")
	}
	closed := make(chan bool, 1)
	go func() { c.claim(); closed <- c.Reserve() }()
	var code int
	c.Accepted(func(cd int, _ string) { code = cd })
	c.Close(CloseUnauthorized, "")
	if <-closed || code != CloseUnauthorized {
		t.Errorf("a closed connection still reserves, or closed with %d", code)
	}
}
