package live

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

// NoteStore is what a live notification stream reads.
type NoteStore interface {
	// NoteChannel announces viewerID's notifications as they rise.
	NoteChannel(viewerID string) string
	// NotificationsAfter reads up to n notifications raised after the
	// activity number after, oldest first, with their first actors.
	NotificationsAfter(ctx context.Context, viewerID string, after int64, n, actors int) ([]*social.Notification, error)
	// NewestNotification is the activity number of the newest one.
	NewestNotification(ctx context.Context, viewerID string) (int64, error)
}

// Notes streams users' notifications. A notification's id is the
// activity number that last raised it, so a stream is a position in that
// sequence: an announcement only wakes the stream, which then reads
// everything raised after its position, in order. A lost announcement
// (a gateway that was not listening, a Redis failover) is caught up by
// the next one or the hub's resync, and a resume with since reads from
// there: no gap and no repeat.
//
// Streams count against the same bounds as live timelines (Timelines'
// MaxPerViewer and MaxStreams). Unlike a timeline stream, a notification
// stream holds a goroutine while it is open.
type Notes struct {
	Hub    *Hub
	Store  NoteStore
	Bounds *Timelines // the stream bounds, shared with live timelines
	// RecheckAuth is how often an open stream checks that its token was
	// not revoked; defaults to Bounds' (30s).
	RecheckAuth time.Duration
}

// noteBatch is the most notifications one read sends.
const noteBatch = 100

// Stream streams viewer's notifications, raised after since (a
// notification id; "" for from now on), each with its first actors ids.
// The channel closes when ctx ends or the stream ends on its own; end
// then says why (nil when ctx ended or the process shuts down).
func (n *Notes) Stream(ctx context.Context, v social.Viewer, since string, actors int) (<-chan *social.Notification, func() error, error) {
	var after int64
	if since != "" {
		var err error
		if after, err = strconv.ParseInt(since, 10, 64); err != nil || !social.IsID(since) {
			return nil, nil, social.Errorf(social.BadUserInput, "since must be a notification id")
		}
	}
	if err := n.Bounds.acquire(v.UserID); err != nil {
		return nil, nil, err
	}
	wake := make(chan struct{}, 1)
	kick := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	sub, err := n.Hub.Subscribe(ctx, kick, n.Store.NoteChannel(v.UserID))
	if errors.Is(err, ErrClosed) {
		n.Bounds.release(v.UserID)
		done := make(chan *social.Notification)
		close(done)
		return done, func() error { return nil }, nil
	}
	if err != nil {
		n.Bounds.release(v.UserID)
		return nil, nil, fmt.Errorf("subscribe to the notifications of %s: %w", v.UserID, err)
	}
	// Subscribed first, then the store: whatever rises from now on is
	// announced; whatever rose before is at or below the newest.
	if since == "" {
		if after, err = n.Store.NewestNotification(ctx, v.UserID); err != nil {
			sub.Close()
			n.Bounds.release(v.UserID)
			return nil, nil, err
		}
	}
	s := &noteStream{n: n, v: v, sub: sub, wake: wake, last: after, actors: actors,
		out: make(chan *social.Notification)}
	go s.run(ctx, since != "")
	return s.out, func() error { return s.err }, nil
}

type noteStream struct {
	n      *Notes
	v      social.Viewer
	sub    *Sub
	wake   chan struct{}
	last   int64
	actors int
	out    chan *social.Notification
	err    error // set before out closes
}

func (s *noteStream) run(ctx context.Context, resume bool) {
	defer func() {
		s.sub.Close()
		s.n.Bounds.release(s.v.UserID)
		close(s.out)
	}()
	recheck := s.n.RecheckAuth
	if recheck == 0 {
		recheck = orDefault(s.n.Bounds.RecheckAuth, 30*time.Second)
	}
	tick := time.NewTicker(recheck)
	defer tick.Stop()
	if resume && !s.catchUp(ctx) {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.sub.Done():
			if e := s.sub.Err(); errors.Is(e, ErrSlow) {
				s.err = social.Errorf(social.RateLimited, "subscription dropped: the client did not keep up; subscribe again with since")
			} else if e != nil && !errors.Is(e, ErrClosed) {
				s.err = e
			}
			return
		case <-s.sub.Resync():
			if !s.catchUp(ctx) {
				return
			}
		case <-s.wake:
			for len(s.sub.C()) > 0 {
				<-s.sub.C() // the messages only wake the stream
			}
			if !s.catchUp(ctx) {
				return
			}
		case <-tick.C:
			if !s.authorised(ctx) {
				return
			}
		}
	}
}

// catchUp sends everything raised after the stream's position; false when
// the stream must end.
func (s *noteStream) catchUp(ctx context.Context) bool {
	for {
		notes, err := s.n.Store.NotificationsAfter(ctx, s.v.UserID, s.last, noteBatch, s.actors)
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			// Redis failed: the next announcement or resync reads again
			// from the same position.
			s.n.Bounds.log().Warn("live: notification read failed", "viewer", s.v.UserID, "err", err)
			return true
		}
		for _, note := range notes {
			select {
			case s.out <- note:
			case <-ctx.Done():
				return false
			}
			s.last, _ = strconv.ParseInt(note.ID, 10, 64)
		}
		if len(notes) < noteBatch {
			return true
		}
	}
}

// authorised checks the token's expiry and revocation, as a timeline
// stream does.
func (s *noteStream) authorised(ctx context.Context) bool {
	if !s.v.ExpiresAt.IsZero() && !time.Now().Before(s.v.ExpiresAt) {
		s.err = social.Errorf(social.Unauthenticated, "access token expired: subscribe again with a fresh token")
		return false
	}
	if revoked, err := s.n.Bounds.Sessions.Revoked(ctx, s.v.TokenID, s.v.Session, s.v.UserID); err == nil && revoked {
		s.err = social.Errorf(social.Unauthenticated, "access token revoked: subscribe again with a fresh token")
		return false
	}
	return true
}
