package redisstore

import "github.com/socialgw/gateway/internal/social"

// This file holds the parts of the stores that later issues build. Each
// answers with a clear error until then, never with made-up data.

func notYet(what string) error {
	return social.Errorf(social.Internal, "%s is not available yet", what)
}
