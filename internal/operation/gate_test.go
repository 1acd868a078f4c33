package operation

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// An operation of a connection gives its execution slots back once it
// has executed, before its answer is written; the answer's bytes wait
// within the connection's and its address's unread bounds until written,
// and the connection's places go back then. An answer that does not fit
// closes the connection and is dropped.
func TestGateReleasesSlotsBeforeWriting(t *testing.T) {
	ctx := context.Background()
	answer := &graphql.Response{Data: json.RawMessage(`{"a":"` + strings.Repeat("x", 1000) + `"}`)}
	// execute runs one operation answered with resp through the gate,
	// holding the only heavy slot, and returns its response handler and
	// how many times done has run.
	execute := func(g *gate, c *Conn, resp *graphql.Response) (graphql.ResponseHandler, *int) {
		t.Helper()
		lease, ok := g.slots.Acquire(ctx, Demand{Client: "ip:a", Heavy: true, Costly: true})
		if !ok {
			t.Fatal("no slot for the operation")
		}
		calls, dones := 0, 0
		next := func(context.Context) graphql.ResponseHandler {
			return func(context.Context) *graphql.Response {
				if calls++; calls == 1 {
					return resp
				}
				return nil
			}
		}
		return g.execute(ctx, c, lease, next, func() { dones++ }), &dones
	}
	// heavyFree reports whether another client gets a heavy and costly
	// slot, giving it back.
	heavyFree := func(g *gate) bool {
		l, ok := g.slots.Acquire(ctx, Demand{Client: "ip:b", Heavy: true, Costly: true})
		if ok {
			l.Release()
		}
		return ok
	}

	g := &gate{slots: NewSlots(4, 10*time.Millisecond), unread: newUnread(1 << 20)}
	c := NewConn("192.0.2.1", "", slog.New(slog.DiscardHandler))
	h, dones := execute(g, c, answer)
	if heavyFree(g) {
		t.Fatal("the heavy slot is free before the operation executed")
	}
	if got := h(ctx); got != answer {
		t.Fatalf("answer %v", got)
	}
	// Executed, not yet written (the transport writes, then asks again).
	if !heavyFree(g) {
		t.Error("the heavy slot is still held while the answer waits to be written")
	}
	if *dones != 0 || c.unread != answerSize(answer) {
		t.Errorf("before the answer is written: done ran %d times, %d unread bytes, want 0 and %d", *dones, c.unread, answerSize(answer))
	}
	if h(ctx) != nil || *dones != 1 || c.unread != 0 || len(g.unread.byClient) != 0 {
		t.Errorf("once written: done ran %d times, %d unread bytes, %d addresses counted", *dones, c.unread, len(g.unread.byClient))
	}

	// An answer that does not fit what the connection has unread.
	g = &gate{slots: NewSlots(4, 10*time.Millisecond), unread: &unread{perConn: 1500, perClient: 1 << 20, byClient: map[string]int64{}}}
	c = NewConn("192.0.2.1", "", slog.New(slog.DiscardHandler))
	var code int
	var reason string
	c.Accepted(func(cd int, r string) { code, reason = cd, r })
	first, _ := execute(g, c, answer)
	if first(ctx) != answer {
		t.Fatal("a first answer of an empty connection did not fit")
	}
	second, dones := execute(g, c, answer)
	if got := second(ctx); got != nil {
		t.Errorf("an answer past the connection's unread bound was kept: %v", got)
	}
	if code != CloseTryAgain || !strings.Contains(reason, "not read") {
		t.Errorf("closed with %d %q, want %d and a reason", code, reason, CloseTryAgain)
	}
	if second(ctx); *dones != 1 || !heavyFree(g) {
		t.Errorf("the dropped answer: done ran %d times, or its slot is held", *dones)
	}

	// An operation whose client left while it executed: its answer,
	// built after the connection's places went back, holds nothing.
	g = &gate{slots: NewSlots(4, 10*time.Millisecond), unread: newUnread(1 << 20)}
	c = NewConn("192.0.2.1", "", slog.New(slog.DiscardHandler))
	lease, _ := g.slots.Acquire(ctx, Demand{Client: "ip:a"})
	left, leave := context.WithCancel(ctx)
	gone := make(chan struct{})
	h = g.execute(left, c, lease, func(context.Context) graphql.ResponseHandler {
		return func(context.Context) *graphql.Response {
			leave()
			<-gone // done has run
			return answer
		}
	}, func() { close(gone) })
	if got := h(ctx); got != nil || c.unread != 0 || len(g.unread.byClient) != 0 {
		t.Errorf("an answer built after its client left: kept %v, %d unread bytes, %d addresses counted", got != nil, c.unread, len(g.unread.byClient))
	}
}
