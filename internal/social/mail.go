package social

import "time"

// MailToken is a pending e-mail token as the store keeps it: never the
// token itself, only its hash, with the address it was mailed to and when
// it stops working.
type MailToken struct {
	Hash    string
	Email   string
	Expires time.Time
}

// The purposes of e-mail tokens: each account holds at most one pending
// token of each, a new one replacing the previous.
const (
	// TokenVerify confirms an address: the registration's, or the new one
	// of an e-mail change.
	TokenVerify = "verify"
	// TokenReset sets a new password.
	TokenReset = "reset"
)
