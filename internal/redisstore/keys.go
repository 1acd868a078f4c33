package redisstore

// Keys builds every Redis key of the gateway; nothing else in the module
// spells a key. docs/data-model.md lists each one with its type, writer and
// bound.
//
// Hash tags: every key that belongs to one user carries {u<id>} and every
// key that belongs to one post carries {p<id>}, so the multi-key scripts
// and transactions that touch one user's or one post's keys stay within
// one Redis Cluster hash slot. Global indexes share the {acct} tag.
type Keys struct {
	prefix string
}

// NewKeys returns the key builder for a prefix (e.g. "sg:").
func NewKeys(prefix string) Keys { return Keys{prefix: prefix} }

// UserSeq is the INCR counter that hands out user ids.
func (k Keys) UserSeq() string { return k.prefix + "{acct}:seq:user" }

// Names maps lower-cased user names to user ids (hash).
func (k Keys) Names() string { return k.prefix + "{acct}:names" }

// Emails maps lower-cased e-mail addresses to user ids (hash).
func (k Keys) Emails() string { return k.prefix + "{acct}:emails" }

// User is the profile and credentials hash of one user.
func (k Keys) User(id string) string { return k.prefix + "u:{u" + id + "}" }

// Session is the refresh-token family hash (uid, current token hash).
func (k Keys) Session(family string) string { return k.prefix + "sess:{" + family + "}" }

// Denied marks a revoked access token id until the token expires.
func (k Keys) Denied(jti string) string { return k.prefix + "deny:{" + jti + "}" }
