package auth

import "time"

// SetNow replaces the clock tokens are issued and verified with.
func (t *Tokens) SetNow(now func() time.Time) { t.now = now }

// Derivations returns how many argon2id derivations p has run.
func (p *Passwords) Derivations() int64 { return p.derived.Load() }

// ValidatePassword is the password length check of Register.
var ValidatePassword = validatePassword

// NormalizeLogin exposes normalizeLogin to tests.
var NormalizeLogin = normalizeLogin
