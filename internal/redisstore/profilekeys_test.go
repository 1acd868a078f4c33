package redisstore_test

import (
	"context"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
)

// TestMigrateProfiles moves profile hashes written under their earlier
// name, leaves a user's other hashes and an already moved profile alone,
// and does nothing the second time.
func TestMigrateProfiles(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t)
	s := redisstore.New(rdb, redistest.Prefix(t))
	k := s.Keys()
	for _, id := range []string{"1", "2", "30"} {
		rdb.HSet(ctx, k.LegacyUser(id), "name", "user"+id, "email", id+"@example.com", "bio", "", "created", "1000", "pw", "x")
		rdb.HSet(ctx, k.HomeMark(id), "floor", "0")
	}
	// 30 registered again under the new layout meanwhile: it keeps that.
	rdb.HSet(ctx, k.User("30"), "name", "newer")

	moved, err := s.MigrateProfiles(ctx)
	if err != nil || moved != 2 {
		t.Fatalf("MigrateProfiles = %d, %v; want 2 moved", moved, err)
	}
	users, err := s.Users(ctx, []string{"1", "2", "30"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"user1", "user2", "newer"} {
		if users[i] == nil || users[i].Name != want {
			t.Errorf("user %d = %+v, want %s", i, users[i], want)
		}
	}
	for _, key := range []string{k.LegacyUser("1"), k.LegacyUser("2")} {
		if rdb.Exists(ctx, key).Val() != 0 {
			t.Errorf("%s still exists", key)
		}
	}
	if rdb.Exists(ctx, k.HomeMark("1")).Val() != 1 {
		t.Error("another hash of the user was moved")
	}
	rdb.HSet(ctx, k.LegacyUser("4"), "name", "late")
	if moved, err := s.MigrateProfiles(ctx); err != nil || moved != 0 {
		t.Errorf("second MigrateProfiles = %d, %v; want nothing done", moved, err)
	}
}
