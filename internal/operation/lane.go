package operation

import (
	"context"
	"slices"
	"sync"
	"time"
)

// fairLane is the heavy or the costly lane of the slots: size places,
// shared between clients rather than first come, first served. A client
// holds at most half of the places (at least one), so that another
// client finds one free whenever the lane has two or more; and when
// clients wait, a place given back goes to the waiting client that holds
// fewest, the one served longest ago among equals. A client with a
// hundred operations waiting therefore gets no more turns than one with
// a single operation: another client waits for at most one of its
// operations to end, however many it sends.
type fairLane struct {
	size, most int

	mu      sync.Mutex
	held    int
	turn    uint64 // counts grants: a client's served is the turn of its last
	clients map[string]*laneClient
	waiting []*laneWaiter // in arrival order
}

type laneClient struct {
	held, waiters int
	served        uint64
}

type laneWaiter struct {
	client  string
	ready   chan struct{} // closed once granted
	granted bool
}

func newFairLane(size int) *fairLane {
	return &fairLane{size: size, most: max(1, (size+1)/2), clients: map[string]*laneClient{}}
}

// take waits for a place for client until one is granted (true), or
// timeout fires or ctx ends (false).
func (l *fairLane) take(ctx context.Context, client string, timeout <-chan time.Time) bool {
	l.mu.Lock()
	c := l.client(client)
	if l.held < l.size && c.held < l.most {
		l.grant(c)
		l.mu.Unlock()
		return true
	}
	w := &laneWaiter{client: client, ready: make(chan struct{})}
	c.waiters++
	l.waiting = append(l.waiting, w)
	l.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-timeout:
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.granted {
		return true // granted as the wait ended: the caller gives it back
	}
	l.waiting = slices.DeleteFunc(l.waiting, func(x *laneWaiter) bool { return x == w })
	c.waiters--
	l.forget(client, c)
	return false
}

// give returns a place of client's and hands free places to the clients
// waiting, fewest held first.
func (l *fairLane) give(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.clients[client]
	c.held--
	l.held--
	for l.held < l.size {
		next := -1
		for i, w := range l.waiting {
			wc := l.clients[w.client]
			if wc.held >= l.most {
				continue
			}
			if next < 0 {
				next = i
				continue
			}
			best := l.clients[l.waiting[next].client]
			if wc.held < best.held || (wc.held == best.held && wc.served < best.served) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		w := l.waiting[next]
		l.waiting = slices.Delete(l.waiting, next, next+1)
		wc := l.clients[w.client]
		wc.waiters--
		l.grant(wc)
		w.granted = true
		close(w.ready)
	}
	l.forget(client, c)
}

func (l *fairLane) client(name string) *laneClient {
	c := l.clients[name]
	if c == nil {
		c = &laneClient{}
		l.clients[name] = c
	}
	return c
}

func (l *fairLane) grant(c *laneClient) {
	l.turn++
	c.served = l.turn
	c.held++
	l.held++
}

// forget drops a client that holds and waits for nothing.
func (l *fairLane) forget(name string, c *laneClient) {
	if c.held == 0 && c.waiters == 0 {
		delete(l.clients, name)
	}
}
