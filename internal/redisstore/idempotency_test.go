package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// TestIdempotencyKeys runs each case's steps against a fresh store whose
// clock the steps move.
func TestIdempotencyKeys(t *testing.T) {
	type step struct {
		advance time.Duration
		user    string
		key     string
		hash    string
		settle  string // after a claim: "save", "release" or "" (leave pending)
		want    social.ClaimState
		answer  string // of a Done claim
	}
	cfg := redisstore.IdempotencyConfig{TTL: 24 * time.Hour, Pending: time.Minute, MaxKeys: 3}
	cases := []struct {
		name  string
		steps []step
	}{
		{"claim then repeat gets the answer", []step{
			{user: "1", key: "k", hash: "h", settle: "save", want: social.Claimed},
			{user: "1", key: "k", hash: "h", want: social.Done, answer: `{"data":{"n":1}}`},
		}},
		{"another user's key is its own", []step{
			{user: "1", key: "k", hash: "h", settle: "save", want: social.Claimed},
			{user: "2", key: "k", hash: "h", want: social.Claimed},
		}},
		{"same key, other request", []step{
			{user: "1", key: "k", hash: "h", settle: "save", want: social.Claimed},
			{user: "1", key: "k", hash: "other", want: social.Mismatch},
		}},
		{"concurrent repeat is pending", []step{
			{user: "1", key: "k", hash: "h", want: social.Claimed},
			{user: "1", key: "k", hash: "h", want: social.Pending},
		}},
		{"a pending claim ends with its lifetime", []step{
			{user: "1", key: "k", hash: "h", want: social.Claimed},
			{advance: time.Minute, user: "1", key: "k", hash: "h", want: social.Claimed},
		}},
		{"a released key runs again", []step{
			{user: "1", key: "k", hash: "h", settle: "release", want: social.Claimed},
			{user: "1", key: "k", hash: "h", want: social.Claimed},
		}},
		{"an answer is kept a day", []step{
			{user: "1", key: "k", hash: "h", settle: "save", want: social.Claimed},
			{advance: 24*time.Hour - time.Second, user: "1", key: "k", hash: "h", want: social.Done, answer: `{"data":{"n":1}}`},
			{advance: time.Second, user: "1", key: "k", hash: "other", want: social.Claimed},
		}},
		{"past the bound the oldest key goes", []step{
			{user: "1", key: "a", hash: "h", settle: "save", want: social.Claimed},
			{advance: time.Second, user: "1", key: "b", hash: "h", settle: "save", want: social.Claimed},
			{advance: time.Second, user: "1", key: "c", hash: "h", settle: "save", want: social.Claimed},
			{advance: time.Second, user: "1", key: "d", hash: "h", settle: "save", want: social.Claimed},
			{user: "1", key: "b", hash: "h", want: social.Done, answer: `{"data":{"n":1}}`},
			{user: "1", key: "a", hash: "h", want: social.Claimed},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := redisstore.Open(redistest.Client(t), redistest.Prefix(t))
			now := time.UnixMilli(1_700_000_000_000)
			db.SetClock(func() time.Time { return now })
			keys := db.Idempotency(cfg)
			ctx := context.Background()
			for i, s := range tc.steps {
				now = now.Add(s.advance)
				c, err := keys.Claim(ctx, s.user, s.key, s.hash)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if c.State != s.want || string(c.Answer) != s.answer {
					t.Fatalf("step %d: got state %d answer %q, want %d %q", i, c.State, c.Answer, s.want, s.answer)
				}
				switch s.settle {
				case "save":
					err = keys.Save(ctx, s.user, s.key, c, []byte(`{"data":{"n":1}}`))
				case "release":
					err = keys.Release(ctx, s.user, s.key, c)
				}
				if err != nil {
					t.Fatalf("step %d: %s: %v", i, s.settle, err)
				}
			}
		})
	}
}

// TestIdempotencySettleOwnClaimOnly checks that a claim that expired and
// was taken by a retry is not settled by its first owner.
func TestIdempotencySettleOwnClaimOnly(t *testing.T) {
	db := redisstore.Open(redistest.Client(t), redistest.Prefix(t))
	now := time.UnixMilli(1_700_000_000_000)
	db.SetClock(func() time.Time { return now })
	keys := db.Idempotency(redisstore.DefaultIdempotency())
	ctx := context.Background()
	first, _ := keys.Claim(ctx, "1", "k", "h")
	now = now.Add(time.Minute)
	second, _ := keys.Claim(ctx, "1", "k", "h")
	if second.State != social.Claimed {
		t.Fatalf("retry after the pending lifetime: state %d", second.State)
	}
	if err := keys.Save(ctx, "1", "k", first, []byte(`{"data":1}`)); err != nil {
		t.Fatal(err)
	}
	if c, _ := keys.Claim(ctx, "1", "k", "h"); c.State != social.Pending {
		t.Fatalf("after the first owner's save: state %d, want pending (the retry's claim)", c.State)
	}
}
