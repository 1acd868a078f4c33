package live

import (
	"math/rand/v2"
	"time"
)

// reconcile makes the connections' subscriptions match the wanted
// channels: it routes each new channel to its master's connection
// (opening it if need be), asks Redis for it there, and leaves channels
// nobody wants. It runs alone, so SSUBSCRIBE and SUNSUBSCRIBE go out in
// the order it decides, and their writes never hold the hub's lock.
func (h *Hub) reconcile() {
	defer h.wg.Done()
	var retry <-chan time.Time
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-h.wake:
		case <-retry:
		}
		retry = nil
		route, leave, wait := h.pending()
		if wait > 0 {
			retry = time.After(wait)
			continue
		}
		asks, failed := h.routeChannels(route)
		if failed {
			h.log.Warn("live: cannot route pub/sub channels yet, retrying")
			retry = time.After(h.deferRetry())
		}
		h.ask(asks)
		h.leave(leave)
	}
}

// pending returns the wanted channels that have no connection yet and, by
// connection, the channels asked there that nobody wants there any more
// (forgotten as asked). While a failure's backoff runs, it returns only
// the wait.
func (h *Hub) pending() (route []string, leave map[*conn][]string, wait time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if wait := time.Until(h.retryAt); wait > 0 {
		return nil, nil, wait
	}
	leave = make(map[*conn][]string)
	for name, c := range h.chans {
		if c.conn == nil {
			route = append(route, name)
		}
	}
	for _, cn := range h.conns {
		for name := range cn.asked {
			if c := h.chans[name]; c == nil || c.conn != cn {
				leave[cn] = append(leave[cn], name)
				delete(cn.asked, name)
			}
		}
	}
	return route, leave, 0
}

// routeChannels assigns each channel to the connection of its master,
// opening it if need be, and returns what to ask of each connection.
// Routing runs outside the lock: on a cluster it may wait for the slot
// map. A channel that cannot be routed now is tried again later (failed).
func (h *Hub) routeChannels(route []string) (asks map[*conn][]string, failed bool) {
	asks = make(map[*conn][]string)
	for _, name := range route {
		addr, client, err := h.route.master(h.ctx, name)
		if err != nil {
			failed = true
			continue
		}
		h.mu.Lock()
		c := h.chans[name]
		if c == nil || c.conn != nil || h.closed {
			h.mu.Unlock()
			continue
		}
		cn := h.conns[addr]
		if cn == nil {
			cn = h.openLocked(addr, client)
		}
		c.conn = cn
		cn.asked[name] = true
		asks[cn] = append(asks[cn], name)
		h.mu.Unlock()
	}
	return asks, failed
}

// ask subscribes each connection to its channels. A failed write is the
// receive loop's business: it drops the connection, and its channels are
// routed again. Sharded channels go one command each: in a cluster only
// channels of one slot may share one.
func (h *Hub) ask(asks map[*conn][]string) {
	for cn, names := range asks {
		for _, name := range names {
			if h.cfg.Classic {
				_ = cn.ps.Subscribe(h.ctx, name)
			} else {
				_ = cn.ps.SSubscribe(h.ctx, name)
			}
		}
	}
}

// leave unsubscribes each connection from the channels nobody wants
// there, and closes a connection left with none.
func (h *Hub) leave(leave map[*conn][]string) {
	for cn, names := range leave {
		h.mu.Lock()
		idle := len(cn.asked) == 0 && h.conns[cn.addr] == cn
		if idle {
			delete(h.conns, cn.addr)
		}
		h.mu.Unlock()
		if idle {
			// Closing the connection leaves every channel at once.
			_ = cn.ps.Close()
			continue
		}
		for _, name := range names {
			if h.cfg.Classic {
				_ = cn.ps.Unsubscribe(h.ctx, name)
			} else {
				_ = cn.ps.SUnsubscribe(h.ctx, name)
			}
		}
	}
}

// deferRetry pushes the next routing attempt back by the backoff, which
// doubles (with jitter) up to MaxBackoff until a channel is confirmed, and
// returns the wait.
func (h *Hub) deferRetry() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	wait := h.backoff/2 + rand.N(h.backoff/2+1)
	h.retryAt = time.Now().Add(wait)
	h.backoff = min(2*h.backoff, h.cfg.MaxBackoff)
	return wait
}
