package operation

import (
	"fmt"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

// unread counts the answers of connections that have been executed and
// not yet written: their operations have given their execution slots
// back (gate), and an answer a client does not read holds only its
// bytes. Those are bounded per connection and per client address, the
// address's share: an answer that does not fit closes its connection
// (CloseTryAgain, with a reason saying so), as a message not read within
// the write deadline does, and its bytes are dropped. An answer always
// fits when nothing else of its connection and address waits, so a
// client that reads is never closed for one large answer (each is
// bounded by MAX_RESPONSE_BYTES).
type unread struct {
	perConn, perClient int64

	mu       sync.Mutex
	byClient map[string]int64
}

// unreadUnit is what the bounds are counted in: the response bound and
// the room boundedWriter allows around it, or 4 MiB without a bound.
func unreadUnit(maxBytes int) int64 {
	if maxBytes <= 0 {
		return 4 << 20
	}
	return int64(maxBytes) + 64<<10
}

// newUnread bounds a connection's unread answers at two of the largest
// answers, and a client address's, all its connections together, at four.
func newUnread(maxBytes int) *unread {
	u := unreadUnit(maxBytes)
	return &unread{perConn: 2 * u, perClient: 4 * u, byClient: map[string]int64{}}
}

// hold counts n bytes of an answer of c waiting to be written, and
// returns how to give them back once written; "" and a close reason when
// they do not fit.
func (u *unread) hold(c *Conn, n int64) (func(), string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	client := u.byClient[c.addr]
	switch {
	case c.unread > 0 && c.unread+n > u.perConn:
		return nil, fmt.Sprintf("answers not read: more than %d MiB waiting on this connection", u.perConn>>20)
	case client > 0 && client+n > u.perClient:
		return nil, fmt.Sprintf("answers not read: more than %d MiB waiting for this address", u.perClient>>20)
	}
	c.unread += n
	u.byClient[c.addr] = client + n
	return sync.OnceFunc(func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		c.unread -= n
		if u.byClient[c.addr] -= n; u.byClient[c.addr] <= 0 {
			delete(u.byClient, c.addr)
		}
	}), ""
}

// answerSize is what an answer is counted as while it waits: its
// rendered data, and its errors at their messages and a little more.
func answerSize(r *graphql.Response) int64 {
	n := int64(len(r.Data)) + 64
	for _, e := range r.Errors {
		n += int64(len(e.Message)) + 128
	}
	return n
}
