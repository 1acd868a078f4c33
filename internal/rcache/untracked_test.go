package rcache_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/rcache"
	"github.com/socialgw/gateway/internal/redistest"
)

// TestTrackerWithoutTracking: on a server without client tracking (the
// embedded development Redis) the tracker says so once, plainly, and
// never that it tracks.
func TestTrackerWithoutTracking(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	var logs redistest.Buffer
	c := rcache.New[string](100, time.Hour)
	tr := rcache.StartTracker(rdb, c, rcache.TrackerConfig{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	t.Cleanup(tr.Close)
	redistest.Eventually(t, 10*time.Second, "the tracker gives up", func() bool {
		return strings.Contains(logs.String(), "no client tracking")
	})
	tr.Close()
	out := logs.String()
	if strings.Count(out, "\n") != 1 || strings.Contains(out, "tracking the servers") || strings.Contains(out, "ERR") || c.Live() {
		t.Errorf("want one line saying there is no tracking, live %v:\n%s", c.Live(), out)
	}
}
