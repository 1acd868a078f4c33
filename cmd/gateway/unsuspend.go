package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/socialgw/gateway/cmd/internal/app"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/redisstore"
)

// unsuspendConfig is what `gateway unsuspend` reads: the Redis settings
// and log format every command has, the user and who lifts the
// suspension.
type unsuspendConfig struct {
	app.Common
	User, By string
}

// unsuspend is the `unsuspend --user NAME [--by OPERATOR]` subcommand: it
// lifts a moderator's suspension of the account named NAME (its content is
// shown again, it may log in) and logs one moderation line naming
// OPERATOR. Lifting a suspension that does not hold changes nothing.
func unsuspend(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	c := &unsuspendConfig{}
	settings := append(c.Common.Settings("the gateway's Redis (required)"),
		app.String(&c.User, "user", "UNSUSPEND_USER", "", "name of the account whose suspension is lifted"),
		app.String(&c.By, "by", "UNSUSPEND_BY", "operator", "who lifts it, for the moderation log line"))
	if _, err := app.Parse("gateway unsuspend", settings, args, getenv, out); err != nil {
		return err
	}
	if c.User == "" || c.RedisURL == "" {
		return errors.New("unsuspend: --user and REDIS_URL are required")
	}
	if err := c.Check(0); err != nil {
		return err
	}
	log, err := c.NewLogger(out)
	if err != nil {
		return err
	}
	rdb, err := c.ConnectRedis(ctx, log)
	if err != nil {
		return err
	}
	defer rdb.Close()
	store := redisstore.New(rdb, c.RedisPrefix)
	u, err := gateway.NewModeration(store, nil, gateway.ModerationConfig{Log: log}).Unsuspend(ctx, c.By, c.User)
	if err != nil {
		return fmt.Errorf("unsuspend %s: %w", c.User, err)
	}
	fmt.Fprintf(out, "unsuspended %s (id %s)\n", u.Name, u.ID)
	return nil
}
