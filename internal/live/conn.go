package live

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// router finds the master that serves a sharded channel. On a single
// server every channel is served by it; on a Redis Cluster a channel
// belongs to its key slot's master, like a key, and a pub/sub connection
// to another master would be answered MOVED.
type router struct {
	// master returns the master's address (the connection's identity
	// in the hub) and a client of it.
	master func(ctx context.Context, channel string) (addr string, client redis.UniversalClient, err error)
	// stale is called when a connection failed: on a cluster the slot
	// map may be out of date (a failover), so it is reloaded.
	stale func()
}

func newRouter(rdb redis.UniversalClient) router {
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		return router{
			master: func(ctx context.Context, channel string) (string, redis.UniversalClient, error) {
				node, err := cc.MasterForKey(ctx, channel)
				if err != nil {
					return "", nil, err
				}
				return node.Options().Addr, node, nil
			},
			stale: func() { cc.ReloadState(context.Background()) },
		}
	}
	return router{
		master: func(context.Context, string) (string, redis.UniversalClient, error) { return "", rdb, nil },
		stale:  func() {},
	}
}

// conn is one pub/sub connection, to one master.
type conn struct {
	addr  string
	ps    *redis.PubSub
	asked map[string]bool // channels asked of it and not left (under hub.mu)
}

// openLocked opens a connection to the master at addr and starts reading
// it. The caller holds h.mu and has checked that the hub is not closed.
func (h *Hub) openLocked(addr string, client redis.UniversalClient) *conn {
	cn := &conn{addr: addr, asked: make(map[string]bool)}
	if h.cfg.Classic {
		cn.ps = client.Subscribe(h.ctx)
	} else {
		cn.ps = client.SSubscribe(h.ctx)
	}
	h.conns[addr] = cn
	h.wg.Add(1)
	go h.receive(cn)
	return cn
}

// receive reads one connection and hands its messages out until the hub
// closes, the connection is retired, or it fails (an error, or nothing,
// not even a pong, for three pings).
func (h *Hub) receive(cn *conn) {
	defer h.wg.Done()
	for {
		msg, err := cn.ps.ReceiveTimeout(h.ctx, 3*h.cfg.Ping)
		if h.ctx.Err() != nil {
			return
		}
		if slot, ok := movedSlot(err); ok {
			// Asked a channel of a slot this master no longer serves (the
			// slot map was stale, or moved meanwhile): the connection is
			// fine, only that slot's channels go elsewhere.
			h.moved(cn, slot)
			continue
		}
		if err != nil {
			h.fail(cn, err)
			return
		}
		switch m := msg.(type) {
		case *redis.Message:
			h.dispatch(cn, m)
		case *redis.Subscription:
			h.confirm(cn, m)
		}
	}
}

// fail drops a failed connection: its channels are routed again after the
// backoff (on a cluster, to whichever master serves them by then), and
// those that had been confirmed are marked lost so their subscribers
// catch up once they are back.
func (h *Hub) fail(cn *conn, err error) {
	h.mu.Lock()
	if h.conns[cn.addr] != cn {
		// Retired by the reconciler (no channel left) or the hub closed.
		h.mu.Unlock()
		return
	}
	delete(h.conns, cn.addr)
	for _, c := range h.chans {
		if c.conn == cn {
			c.conn = nil
			if c.confirmed {
				c.confirmed, c.lost = false, true
			}
		}
	}
	h.mu.Unlock()
	h.reconnects.Add(1)
	wait := h.deferRetry()
	h.log.Warn("live: pub/sub connection failed, subscribing its channels again", "addr", cn.addr, "err", err, "backoff", wait)
	_ = cn.ps.Close()
	h.route.stale()
	h.poke()
}

// moved unroutes the channels of slot asked on cn: they are routed again
// after a short wait, once the slot map was reloaded.
func (h *Hub) moved(cn *conn, slot int) {
	h.mu.Lock()
	n := 0
	for name := range cn.asked {
		if hashSlot(name) != slot {
			continue
		}
		delete(cn.asked, name)
		n++
		if c := h.chans[name]; c != nil && c.conn == cn {
			c.conn = nil
			if c.confirmed {
				c.confirmed, c.lost = false, true
			}
		}
	}
	h.mu.Unlock()
	h.log.Info("live: channels moved to another master", "addr", cn.addr, "slot", slot, "channels", n)
	h.route.stale()
	h.deferRetry()
	h.poke()
}

// movedSlot recognizes Redis's MOVED redirection (an error reply to
// SSUBSCRIBE on a connection to a master that does not serve the slot).
func movedSlot(err error) (int, bool) {
	if err == nil {
		return 0, false
	}
	rest, ok := strings.CutPrefix(err.Error(), "MOVED ")
	if !ok {
		return 0, false
	}
	n, _, _ := strings.Cut(rest, " ")
	slot, err := strconv.Atoi(n)
	return slot, err == nil
}

// hashSlot is the Redis Cluster hash slot of a key or sharded channel: CRC16
// (XMODEM) of its hash tag — the part between the first { and the next },
// when not empty — or of the whole name, modulo 16384.
func hashSlot(name string) int {
	if i := strings.IndexByte(name, '{'); i >= 0 {
		if j := strings.IndexByte(name[i+1:], '}'); j > 0 {
			name = name[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(name); k++ {
		crc ^= uint16(name[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc % 16384)
}

func (h *Hub) confirm(cn *conn, m *redis.Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.chans[m.Channel]
	if c == nil || c.conn != cn {
		return
	}
	switch m.Kind {
	case "ssubscribe", "subscribe":
		if c.confirmed {
			return
		}
		c.confirmed = true
		h.backoff = h.cfg.MinBackoff
		select {
		case <-c.ready:
		default:
			close(c.ready)
		}
		if c.lost {
			c.lost = false
			for s := range c.subs {
				select {
				case s.resync <- struct{}{}:
				default:
				}
				s.poke()
			}
		}
	case "sunsubscribe", "unsubscribe":
		// Still wanted: Redis dropped it on its own (in a cluster, when
		// its slot moved to another master). Route it again; what came
		// meanwhile is lost.
		if cn.asked[m.Channel] {
			delete(cn.asked, m.Channel)
			c.conn = nil
			if c.confirmed {
				c.confirmed, c.lost = false, true
			}
			// Routed at once, the stale slot map would send it back here
			// (answered MOVED): give the reload a moment.
			h.route.stale()
			h.retryAt = time.Now().Add(h.cfg.MinBackoff)
			h.poke()
		}
	}
}

func (h *Hub) dispatch(cn *conn, m *redis.Message) {
	msg := Message{Channel: m.Channel, Payload: m.Payload}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.chans[m.Channel]
	if c == nil || c.conn != cn {
		return
	}
	for s := range c.subs {
		select {
		case s.c <- msg:
			h.delivered.Add(1)
			s.poke()
		default:
			h.dropped.Add(1)
			h.dropLocked(s, ErrSlow)
		}
	}
}
