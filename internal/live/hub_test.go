package live_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/live"
	"github.com/socialgw/gateway/internal/redisproc"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newHub starts a hub over the package's server, closed at test end.
func newHub(t *testing.T, cfg live.HubConfig) (*live.Hub, redis.UniversalClient) {
	t.Helper()
	rdb := redistest.Client(t)
	requireReal(t)
	h := live.NewHub(rdb, cfg, nil)
	t.Cleanup(h.Close)
	return h, rdb
}

func subscribe(t *testing.T, h *live.Hub, channels ...string) *live.Sub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := h.Subscribe(ctx, nil, channels...)
	if err != nil {
		t.Fatalf("Subscribe(%v): %v", channels, err)
	}
	t.Cleanup(s.Close)
	return s
}

func receive(t *testing.T, s *live.Sub) live.Message {
	t.Helper()
	select {
	case m := <-s.C():
		return m
	case <-s.Done():
		t.Fatalf("subscription ended: %v", s.Err())
	case <-time.After(5 * time.Second):
		t.Fatalf("no message within 5s")
	}
	return live.Message{}
}

func publish(t *testing.T, rdb redis.UniversalClient, channel, msg string) {
	t.Helper()
	if err := rdb.SPublish(context.Background(), channel, msg).Err(); err != nil {
		t.Fatalf("SPUBLISH %s: %v", channel, err)
	}
}

// numSub is how many connections Redis counts on a sharded channel, asked
// of the master that serves it (a cluster client would ask any node).
func numSub(t *testing.T, rdb redis.UniversalClient, channel string) int64 {
	t.Helper()
	n, err := redistest.Master(t, rdb, channel).PubSubShardNumSub(context.Background(), channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n[channel]
}

// eachMaster runs f on every master, one at a time: rdb itself on a
// single server.
func eachMaster(t *testing.T, rdb redis.UniversalClient, f func(redis.UniversalClient)) {
	t.Helper()
	var mu sync.Mutex
	err := redisstore.EachServer(context.Background(), rdb, func(_ context.Context, m redis.UniversalClient) error {
		mu.Lock()
		defer mu.Unlock()
		f(m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pubsubClients counts the connections in (sharded) pub/sub mode, over
// every master.
func pubsubClients(t *testing.T, rdb redis.UniversalClient) int {
	t.Helper()
	n := 0
	eachMaster(t, rdb, func(m redis.UniversalClient) {
		list, err := m.ClientList(context.Background()).Result()
		if err != nil {
			t.Error(err)
			return
		}
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, "flags=P") {
				n++
			}
		}
	})
	return n
}

// TestHubMultiplexesOneConnection: a process holds one pub/sub
// connection per master serving its channels, whatever the subscribers.
func TestHubMultiplexesOneConnection(t *testing.T) {
	h, rdb := newHub(t, live.HubConfig{})
	p := redistest.Prefix(t)
	a, b := p+"{u1}:live", p+"{u2}:live"
	masters := map[string]bool{}
	for _, ch := range []string{a, b} {
		masters[fmt.Sprintf("%p", redistest.Master(t, rdb, ch))] = true
	}
	before := pubsubClients(t, rdb)
	s1 := subscribe(t, h, a)
	s2 := subscribe(t, h, a, b)
	s3 := subscribe(t, h, b)
	// Subscribe returned: Redis confirmed, so a message published now
	// arrives.
	publish(t, rdb, a, "to a")
	publish(t, rdb, b, "to b")
	for _, c := range []struct {
		name string
		sub  *live.Sub
		want []string
	}{
		{"only a", s1, []string{"to a"}},
		{"a and b", s2, []string{"to a", "to b"}},
		{"only b", s3, []string{"to b"}},
	} {
		var got []string
		for range c.want {
			got = append(got, receive(t, c.sub).Payload)
		}
		// Channels served by different masters arrive in any order.
		slices.Sort(got)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
		select {
		case m := <-c.sub.C():
			t.Errorf("%s: extra message %v", c.name, m)
		default:
		}
	}
	if n := numSub(t, rdb, a); n != 1 {
		t.Errorf("connections on %s = %d, want 1 (one per process)", a, n)
	}
	if got := pubsubClients(t, rdb) - before; got != len(masters) {
		t.Errorf("pub/sub connections of the hub = %d, want %d (one per master serving its channels)", got, len(masters))
	}
	if st := h.Stats(); st.Conns != len(masters) {
		t.Errorf("hub stats %+v, want %d connections", st, len(masters))
	}
	// The last subscriber of a channel leaving unsubscribes it in Redis.
	s1.Close()
	s2.Close()
	redistest.Eventually(t, 5*time.Second, "channel a unsubscribed", func() bool { return numSub(t, rdb, a) == 0 })
	if n := numSub(t, rdb, b); n != 1 {
		t.Errorf("connections on %s = %d after the others left, want 1", b, n)
	}
	if st := h.Stats(); st.Subscribers != 1 || st.Channels != 1 {
		t.Errorf("stats %+v, want 1 subscriber and 1 channel", st)
	}
}

func TestHubDropsSlowSubscriber(t *testing.T) {
	h, rdb := newHub(t, live.HubConfig{Buffer: 4})
	ch := redistest.Prefix(t) + "{u1}:live"
	slow := subscribe(t, h, ch)
	fast := subscribe(t, h, ch)
	for i := range 10 {
		publish(t, rdb, ch, fmt.Sprint(i))
		if got := receive(t, fast).Payload; got != fmt.Sprint(i) {
			t.Fatalf("fast subscriber got %q, want %d", got, i)
		}
	}
	select {
	case <-slow.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("slow subscriber not dropped")
	}
	if !errors.Is(slow.Err(), live.ErrSlow) {
		t.Errorf("slow subscriber's error = %v, want ErrSlow", slow.Err())
	}
	if st := h.Stats(); st.Dropped != 1 || st.Subscribers != 1 {
		t.Errorf("stats %+v, want 1 dropped and 1 subscriber left", st)
	}
}

func TestHubSurvivesRedisRestart(t *testing.T) {
	requireReal(t)
	srv, err := redisproc.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	h := live.NewHub(rdb, live.HubConfig{Ping: 200 * time.Millisecond, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}, nil)
	t.Cleanup(h.Close)
	s := subscribe(t, h, "{u1}:live")
	publish(t, rdb, "{u1}:live", "before")
	if got := receive(t, s).Payload; got != "before" {
		t.Fatalf("got %q, want before", got)
	}
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The subscriber learns that it may have missed messages once the
	// channel is subscribed again, and then gets new ones.
	select {
	case <-s.Resync():
	case <-s.Done():
		t.Fatalf("subscription ended: %v", s.Err())
	case <-time.After(10 * time.Second):
		t.Fatal("no resync within 10s of the restart")
	}
	publish(t, rdb, "{u1}:live", "after")
	if got := receive(t, s).Payload; got != "after" {
		t.Fatalf("got %q, want after", got)
	}
	if st := h.Stats(); st.Reconnects < 1 {
		t.Errorf("stats %+v, want a reconnect", st)
	}
}

func TestHubSubscribeWhileRedisDown(t *testing.T) {
	requireReal(t)
	srv, err := redisproc.Start()
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	h := live.NewHub(rdb, live.HubConfig{Ping: 100 * time.Millisecond, MinBackoff: 10 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, ConfirmTimeout: 300 * time.Millisecond}, nil)
	t.Cleanup(h.Close)
	srv.Stop()
	start := time.Now()
	_, err = h.Subscribe(context.Background(), nil, "{u1}:live")
	if !errors.Is(err, live.ErrUnavailable) {
		t.Fatalf("Subscribe with Redis down: %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Subscribe took %s, want about the confirm timeout", d)
	}
	if st := h.Stats(); st.Subscribers != 0 {
		t.Errorf("stats %+v, want no subscriber left", st)
	}
}

func TestHubCloseReleasesGoroutines(t *testing.T) {
	requireReal(t)
	rdb := redistest.Client(t)
	// A cluster client starts its node clients on first use: warm them
	// so that the baseline counts them.
	eachMaster(t, rdb, func(m redis.UniversalClient) { _ = m.Ping(context.Background()).Err() })
	base := runtime.NumGoroutine()
	h := live.NewHub(rdb, live.HubConfig{}, nil)
	p := redistest.Prefix(t)
	subs := make([]*live.Sub, 50)
	for i := range subs {
		subs[i] = subscribe(t, h, fmt.Sprintf("%s{u%d}:live", p, i))
	}
	h.Close()
	for _, s := range subs {
		select {
		case <-s.Done():
		default:
			t.Fatal("a subscription outlived Close")
		}
		if !errors.Is(s.Err(), live.ErrClosed) {
			t.Errorf("error after Close = %v, want ErrClosed", s.Err())
		}
	}
	redistest.Eventually(t, 5*time.Second, "goroutines back to baseline", func() bool { return runtime.NumGoroutine() <= base })
}

// requireReal skips where redistest fell back to miniredis, which has no
// sharded pub/sub.
func requireReal(t *testing.T) {
	t.Helper()
	redistest.Addr(t)
	if !redistest.Real() {
		t.Skip("sharded pub/sub needs a real redis-server")
	}
}

// TestHubClusterFailover: the master serving a channel is killed; once
// its replica took over, the hub has subscribed the channel there, told
// the subscriber to catch up, and delivers again — without a restart.
func TestHubClusterFailover(t *testing.T) {
	// A cluster of its own: the package's is shared with other tests.
	c, rdb := redistest.OwnCluster(t)
	h := live.NewHub(rdb, live.HubConfig{Ping: 200 * time.Millisecond, MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond}, nil)
	t.Cleanup(h.Close)
	moving, staying := "{u1}:live", ""
	master, err := c.Master(moving)
	if err != nil {
		t.Fatal(err)
	}
	// A channel served by another master keeps its subscription.
	for i := 2; staying == ""; i++ {
		if m, err := c.Master(fmt.Sprintf("{u%d}:live", i)); err == nil && m != master {
			staying = fmt.Sprintf("{u%d}:live", i)
		}
	}
	sm := subscribe(t, h, moving)
	ss := subscribe(t, h, staying)
	publish(t, rdb, moving, "before")
	if got := receive(t, sm).Payload; got != "before" {
		t.Fatalf("got %q, want before", got)
	}

	killed := time.Now()
	master.Stop()
	select {
	case <-sm.Resync():
	case <-sm.Done():
		t.Fatalf("subscription ended: %v", sm.Err())
	case <-time.After(30 * time.Second):
		t.Fatal("no resync within 30 s of the master's death")
	}
	t.Logf("channel subscribed on the promoted replica %s after its master was killed", time.Since(killed).Round(time.Millisecond))
	publish(t, rdb, moving, "after")
	if got := receive(t, sm).Payload; got != "after" {
		t.Fatalf("got %q, want after", got)
	}
	publish(t, rdb, staying, "still here")
	if got := receive(t, ss).Payload; got != "still here" {
		t.Fatalf("got %q on the other master's channel, want still here", got)
	}
	select {
	case <-ss.Resync():
		t.Error("the channel on the surviving master was resynced: its connection should not have been touched")
	default:
	}
}

// TestHubClusterReshard: the slot of a subscribed channel moves to
// another master (as redis-cli --cluster reshard does it: IMPORTING,
// MIGRATING, then NODE everywhere). The old master drops the channel
// (SUNSUBSCRIBE); the hub subscribes it on the new one, tells the
// subscriber to catch up, and delivers again.
func TestHubClusterReshard(t *testing.T) {
	if !redistest.ClusterMode() {
		t.Skip("needs REDIS_CLUSTER_TESTS=1 (a local Redis Cluster)")
	}
	ctx := context.Background()
	rdb := redistest.Client(t)
	cc := rdb.(*redis.ClusterClient)
	h := live.NewHub(rdb, live.HubConfig{MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}, nil)
	t.Cleanup(h.Close)
	// A tag of its own: its slot holds no key of another test, so moving
	// it migrates nothing.
	ch := redistest.Prefix(t) + "{reshard}:live"
	s := subscribe(t, h, ch)

	slot, err := cc.ClusterKeySlot(ctx, ch).Result()
	if err != nil {
		t.Fatal(err)
	}
	from, err := cc.MasterForKey(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	var to *redis.Client
	var masters []*redis.Client
	eachMaster(t, rdb, func(m redis.UniversalClient) {
		c := m.(*redis.Client)
		masters = append(masters, c)
		if c.Options().Addr != from.Options().Addr && to == nil {
			to = c
		}
	})
	id := func(c *redis.Client) string {
		id, err := c.ClusterMyID(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	fromID, toID := id(from), id(to)
	for _, step := range []struct {
		node *redis.Client
		args []any
	}{
		{to, []any{"cluster", "setslot", slot, "importing", fromID}},
		{from, []any{"cluster", "setslot", slot, "migrating", toID}},
		{to, []any{"cluster", "setslot", slot, "node", toID}},
		{from, []any{"cluster", "setslot", slot, "node", toID}},
	} {
		if err := step.node.Do(ctx, step.args...).Err(); err != nil {
			t.Fatalf("%v: %v", step.args, err)
		}
	}
	for _, m := range masters {
		if m != from && m != to {
			_ = m.Do(ctx, "cluster", "setslot", slot, "node", toID).Err()
		}
	}
	select {
	case <-s.Resync():
	case <-s.Done():
		t.Fatalf("subscription ended: %v", s.Err())
	case <-time.After(15 * time.Second):
		t.Fatal("no resync within 15 s of the slot's move")
	}
	publishMoved := func() error { return rdb.SPublish(ctx, ch, "moved").Err() }
	redistest.Eventually(t, 5*time.Second, "a publish on the new master", func() bool { return publishMoved() == nil })
	if got := receive(t, s).Payload; got != "moved" {
		t.Fatalf("got %q, want moved", got)
	}
	if n := numSub(t, rdb, ch); n != 1 {
		t.Errorf("subscribers of %s on its new master = %d, want 1", ch, n)
	}
}

// TestSlot checks the hash slot against Redis's own CLUSTER KEYSLOT
// examples (and hash tag rules).
func TestSlot(t *testing.T) {
	for _, tt := range []struct {
		name string
		want int
	}{
		{"123456789", 12739}, // CRC16/XMODEM check value 0x31C3
		{"foo", 12182},
		{"{user1000}.following", 3443},
		{"{user1000}.followers", 3443},
		{"foo{}{bar}", 8363}, // an empty tag: the whole name
		{"foo{{bar}}zap", 4015},
		{"foo{bar}{zap}", 5061},
		{"bar", 5061},
	} {
		if got := live.Slot(tt.name); got != tt.want {
			t.Errorf("Slot(%q) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestMovedSlot: only Redis's MOVED redirection is taken for a slot that
// moved; every other error fails the connection.
func TestMovedSlot(t *testing.T) {
	for _, tt := range []struct {
		err  error
		slot int
		ok   bool
	}{
		{redis.ErrClosed, 0, false},
		{errors.New("MOVED 14748 127.0.0.1:44441"), 14748, true},
		{errors.New("MOVED x 127.0.0.1:44441"), 0, false},
		{errors.New("ASK 12 127.0.0.1:1"), 0, false},
		{nil, 0, false},
	} {
		slot, ok := live.MovedSlot(tt.err)
		if slot != tt.slot || ok != tt.ok {
			t.Errorf("MovedSlot(%v) = %d, %v; want %d, %v", tt.err, slot, ok, tt.slot, tt.ok)
		}
	}
}
