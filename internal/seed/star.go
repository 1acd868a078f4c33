package seed

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// Star is a data set for measuring fan-out: one author followed by many,
// and one author followed by nobody.
type Star struct {
	Celebrity, Quiet string   // user ids
	Followers        []string // of Celebrity
	Duration         time.Duration
}

// NewStar builds a Star with n followers in store, through CreateUser and
// Follow, and reads every follower's home timeline once so that hybrid
// fan-out counts them as active (raise the store's celebrity threshold
// above n to have the celebrity pushed rather than pulled).
func NewStar(ctx context.Context, store *redisstore.Store, n, concurrency int) (*Star, error) {
	if concurrency <= 0 {
		concurrency = 16
	}
	start := time.Now()
	hash, err := auth.NewPasswords(1).Hash("seed password")
	if err != nil {
		return nil, err
	}
	ids := make([]string, n+2)
	err = each(ctx, n+2, concurrency, func(ctx context.Context, i int) error {
		name := "star" + strconv.Itoa(i)
		u, err := store.CreateUser(ctx, social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: hash})
		if err != nil {
			return fmt.Errorf("create user %s: %w", name, err)
		}
		ids[i] = u.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := &Star{Celebrity: ids[0], Quiet: ids[1], Followers: ids[2:]}
	err = each(ctx, n, concurrency, func(ctx context.Context, i int) error {
		if err := store.Follow(ctx, s.Followers[i], s.Celebrity); err != nil {
			return err
		}
		_, err := store.HomePage(ctx, s.Followers[i], social.PageRequest{First: 1}, readplan.PageWants{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("follow the celebrity: %w", err)
	}
	s.Duration = time.Since(start)
	return s, nil
}
