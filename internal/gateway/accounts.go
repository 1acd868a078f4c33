package gateway

import (
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/redisstore"
)

// newAuth wires the accounts and sessions service, and the mail service
// its e-mail flows use (g.Mail), over g's store.
func (g *Gateway) newAuth(tokens *auth.Tokens) *auth.Service {
	store, cfg := g.Store, g.cfg
	g.Mail = redisstore.NewMailService(store.DB)
	return &auth.Service{
		Accounts:     store.AccountService,
		Sessions:     store.SessionService,
		Tokens:       tokens,
		Passwords:    auth.NewPasswords(cfg.PasswordConcurrency),
		RefreshTTL:   cfg.RefreshTTL,
		RefreshGrace: cfg.Abuse.RefreshGrace,
		Limits:       g.Limiter,

		Mail:            g.Mail,
		EndSessions:     store.SessionService,
		ResetTTL:        cfg.Accounts.ResetTokenTTL,
		RequireVerified: cfg.Accounts.RequireVerifiedEmail,
		Deleter:         store.AccountService,
	}
}
