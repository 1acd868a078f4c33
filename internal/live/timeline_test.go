package live_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/live"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// fakeStore is a home timeline in memory, whose reads fail while down.
type fakeStore struct {
	channel string
	mu      sync.Mutex
	home    []int64 // post ids, oldest first
	down    bool
	refused int // reads refused while down
}

var errDown = errors.New("store down")

func (f *fakeStore) LiveChannels(string) []string { return []string{f.channel} }

func (f *fakeStore) add(id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.home = append(f.home, id)
}

func (f *fakeStore) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

// refusedReads reports how many reads failed while the store was down.
func (f *fakeStore) refusedReads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

func (f *fakeStore) LivePosts(_ context.Context, _ string, msgs []string) ([]*social.Post, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		f.refused++
		return nil, errDown
	}
	out := make([]*social.Post, len(msgs))
	for i, m := range msgs {
		out[i] = &social.Post{ID: m}
	}
	return out, nil
}

func (f *fakeStore) HomePage(_ context.Context, _ string, p social.PageRequest, _ readplan.PageWants) (*readplan.Page, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		f.refused++
		return nil, errDown
	}
	var c social.Connection[*social.Post]
	for i := len(f.home) - 1; i >= 0 && len(c.Items) < p.First; i-- {
		id := strconv.FormatInt(f.home[i], 10)
		c.Items = append(c.Items, &social.Post{ID: id})
		c.Cursors = append(c.Cursors, id)
	}
	return &readplan.Page{Posts: c}, nil
}

type noRevocation struct{}

func (noRevocation) Revoked(context.Context, string, string, string) (bool, error) { return false, nil }

// stream starts a live timeline of user 1 over a fake store and a hub on
// the test Redis.
func stream(t *testing.T, f *fakeStore, buffer int) (<-chan *social.Post, func() error) {
	t.Helper()
	h, _ := newHub(t, live.HubConfig{Buffer: buffer})
	tl := &live.Timelines{Hub: h, Store: f, Sessions: noRevocation{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	posts, end, err := tl.Stream(ctx, social.Viewer{UserID: "1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return posts, end
}

// next returns the ids of the next n posts of a stream.
func next(t *testing.T, posts <-chan *social.Post, end func() error, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		select {
		case p, ok := <-posts:
			if !ok {
				t.Fatalf("stream ended after %v: %v", got, end())
			}
			got = append(got, p.ID)
		case <-time.After(10 * time.Second):
			t.Fatalf("got %v within 10 s, want %d posts", got, n)
		}
	}
	return got
}

func ids(from, to int64) []string {
	var out []string
	for id := from; id <= to; id++ {
		out = append(out, strconv.FormatInt(id, 10))
	}
	return out
}

// TestStreamThroughStoreOutage: while the store fails (a failover), the
// posts announced meanwhile outnumber the subscriber's buffer. The stream
// is not dropped as too slow: it catches up from the home timeline once
// the store is back, in order, with nothing lost.
func TestStreamThroughStoreOutage(t *testing.T) {
	requireReal(t)
	f := &fakeStore{channel: redistest.Prefix(t) + "{u1}:live", home: []int64{1, 2, 3}}
	posts, end := stream(t, f, 4)
	rdb := redistest.Client(t)
	f.setDown(true)
	for id := int64(4); id <= 23; id++ {
		f.add(id) // in the home timeline when announced, as fan-out does
		publish(t, rdb, f.channel, fmt.Sprint(id))
		time.Sleep(10 * time.Millisecond) // announcements spread over the outage
	}
	redistest.Eventually(t, 5*time.Second, "a read refused during the outage", func() bool { return f.refusedReads() > 0 })
	f.setDown(false)
	if got := next(t, posts, end, 20); !slices.Equal(got, ids(4, 23)) {
		t.Fatalf("posts after the outage %v, want 4…23 in order", got)
	}
}

// TestStreamCatchUpStartsAtNewest: a stream that has sent nothing yet
// catches up (here after a failed delivery check) from the home
// timeline's newest post when it started, not from the beginning.
func TestStreamCatchUpStartsAtNewest(t *testing.T) {
	requireReal(t)
	f := &fakeStore{channel: redistest.Prefix(t) + "{u1}:live"}
	for id := int64(1); id <= 50; id++ {
		f.add(id)
	}
	posts, end := stream(t, f, 64)
	rdb := redistest.Client(t)
	f.setDown(true)
	f.add(51)
	publish(t, rdb, f.channel, "51")
	redistest.Eventually(t, 5*time.Second, "the delivery check refused", func() bool { return f.refusedReads() > 0 })
	f.setDown(false)
	if got := next(t, posts, end, 1); !slices.Equal(got, []string{"51"}) {
		t.Fatalf("first post %v, want 51 (the home timeline's older posts are not news)", got)
	}
	select {
	case p := <-posts:
		t.Fatalf("extra post %s", p.ID)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestStreamAfterClose: a stream started while the process shuts down (its
// hub closed) completes at once, as the open ones do, without an error:
// the client reconnects to another gateway.
func TestStreamAfterClose(t *testing.T) {
	h, _ := newHub(t, live.HubConfig{})
	tl := &live.Timelines{Hub: h, Store: &fakeStore{channel: "c"}, Sessions: noRevocation{}, MaxPerViewer: 1}
	h.Close()
	for range 2 { // the place it took is given back
		posts, end, err := tl.Stream(context.Background(), social.Viewer{UserID: "1"}, "")
		if err != nil {
			t.Fatalf("Stream after Close: %v", err)
		}
		if _, open := <-posts; open || end() != nil {
			t.Fatalf("the stream did not complete cleanly")
		}
	}
}
