package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// The states of an account's latest export, step by step: none, pending
// (one at a time), ready, a second request the same day, the next day,
// expired, failed and stale, and a job settling an export that is no
// longer the latest. A refused request changes nothing and queues
// nothing.
func TestExportStates(t *testing.T) {
	ctx := context.Background()
	const day = 24 * time.Hour
	type step struct {
		after   time.Duration // the clock moves on first
		do      string        // request, ready, fail, readyFirst (the first export's job)
		code    social.Code   // a request's error code
		want    social.ExportStatus
		none    bool // LatestExport is nil
		sameID  bool // the latest is the one before the step
		queued  int64
		message string
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"none", []step{{none: true}}},
		{"pending, one at a time", []step{
			{do: "request", want: social.ExportPending, queued: 1},
			{after: time.Minute, do: "request", code: social.BadUserInput, want: social.ExportPending, sameID: true, queued: 1},
		}},
		{"ready", []step{
			{do: "request", want: social.ExportPending, queued: 1},
			{after: time.Minute, do: "ready", want: social.ExportReady, sameID: true, queued: 1},
		}},
		{"second the same day", []step{
			{do: "request", want: social.ExportPending, queued: 1},
			{do: "ready", want: social.ExportReady, sameID: true, queued: 1},
			{after: 23 * time.Hour, do: "request", code: social.BadUserInput, want: social.ExportReady, sameID: true, queued: 1},
		}},
		{"the next day", []step{
			{do: "request", want: social.ExportPending, queued: 1},
			{do: "ready", want: social.ExportReady, sameID: true, queued: 1},
			{after: day, do: "request", want: social.ExportPending, queued: 2},
		}},
		{"expired", []step{
			{do: "request", want: social.ExportPending, queued: 1},
			{do: "ready", want: social.ExportReady, sameID: true, queued: 1},
			{after: 7*day - time.Minute, want: social.ExportReady, sameID: true, queued: 1},
			{after: time.Minute, none: true, queued: 1},
			{do: "request", want: social.ExportPending, queued: 2},
		}},
		{"failed, asked again at once", []step{
			{do: "request", want: social.ExportPending, queued: 1},
			{do: "fail", want: social.ExportFailed, sameID: true, queued: 1},
			{do: "request", want: social.ExportPending, queued: 2},
		}},
		{"stale pending reads as failed", []step{
			{do: "request", want: social.ExportPending, queued: 1},
			{after: time.Hour, want: social.ExportFailed, sameID: true, queued: 1},
			{do: "request", want: social.ExportPending, queued: 2},
			{do: "readyFirst", want: social.ExportPending, sameID: true, queued: 2, message: "the first export's job settles nothing"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _, ids := mailUsers(t, 1)
			user := ids[0]
			now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			s.SetClock(func() time.Time { return now })
			x := redisstore.NewExportService(s, redisstore.DefaultExports())
			var latest, first *social.DataExport
			for i, st := range tc.steps {
				now = now.Add(st.after)
				var err error
				switch st.do {
				case "request":
					var e *social.DataExport
					e, err = x.RequestExport(ctx, user)
					if err == nil && (e.Status != social.ExportPending || e.ID == "" || !e.CreatedAt.Equal(now)) {
						t.Fatalf("step %d: request = %+v", i, e)
					}
				case "ready":
					err = x.SettleExport(ctx, user, latest.ID, 1234)
				case "fail":
					err = x.SettleExport(ctx, user, latest.ID, 0)
				case "readyFirst":
					err = x.SettleExport(ctx, user, first.ID, 1234)
				}
				if social.ErrorCode(err) != st.code || (st.code == "" && err != nil) {
					t.Fatalf("step %d (%s): err %v, want code %q", i, st.do, err, st.code)
				}
				got, err := x.LatestExport(ctx, user)
				if err != nil {
					t.Fatal(err)
				}
				if st.none != (got == nil) {
					t.Fatalf("step %d: latest = %+v, want none: %v", i, got, st.none)
				}
				if got != nil {
					if got.Status != st.want {
						t.Fatalf("step %d: status %s, want %s %s", i, got.Status, st.want, st.message)
					}
					if st.sameID != (latest != nil && got.ID == latest.ID) {
						t.Fatalf("step %d: id %s after %v, same wanted: %v", i, got.ID, latest, st.sameID)
					}
					if got.Status == social.ExportReady && (got.Bytes != 1234 || got.Until.IsZero()) {
						t.Fatalf("step %d: ready export %+v", i, got)
					}
					if first == nil {
						first = got
					}
					latest = got
				}
				stream, _, _ := x.ExportQueue()
				if n := s.Client().XLen(ctx, stream).Val(); n != st.queued {
					t.Fatalf("step %d: %d jobs queued, want %d", i, n, st.queued)
				}
			}
		})
	}
}
